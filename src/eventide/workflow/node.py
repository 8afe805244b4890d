"""``Node`` (a base class to subclass) and the ``@node`` decorator."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from pydantic import Field

from eventide.errors import WorkflowConfigurationError
from eventide.workflow.base_node import BaseNode
from eventide.workflow.node_builder import build_node
from eventide.workflow.parallel_worker import ParallelWorker
from eventide.workflow.retry_config import RetryConfig

if TYPE_CHECKING:
    from eventide.node_context import Context

__all__ = ["Node", "node"]


class Node(BaseNode):
    """A node to subclass: implement :meth:`run_node_impl`.

    Attributes:
        parallel_worker: run once per item of a list input (concurrently) and output the
            list of outputs.
        max_parallel_workers: how many items run at once (None: no limit).
    """

    parallel_worker: bool = Field(default=False, frozen=True)
    max_parallel_workers: int | None = Field(default=None, frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        _check_workers(self.parallel_worker, self.max_parallel_workers)
        if self.parallel_worker:
            # Its items run as children (ctx.run_node): it continues them by running again.
            self.rerun_on_resume = True

    async def run_node_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        """The node's logic: yield events, ``RequestInput``s or output values."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement "
            "`async def run_node_impl(self, *, ctx, node_input)`."
        )
        yield  # pragma: no cover - makes this an async generator

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        if self.parallel_worker:
            single = self.model_copy(
                update={"parallel_worker": False, "max_parallel_workers": None}
            )
            worker = ParallelWorker(single, max_parallel_workers=self.max_parallel_workers)
            async for item in worker._run_impl(ctx=ctx, node_input=node_input):  # pyright: ignore[reportPrivateUsage]
                yield item
            return
        async for item in self.run_node_impl(ctx=ctx, node_input=node_input):
            yield item


def _check_workers(parallel_worker: bool, max_parallel_workers: int | None) -> None:
    if max_parallel_workers is None:
        return
    if not parallel_worker:
        raise WorkflowConfigurationError(
            "max_parallel_workers can only be set when parallel_worker is True."
        )
    if max_parallel_workers < 1:
        raise WorkflowConfigurationError("max_parallel_workers must be greater than or equal to 1.")


@overload
def node(
    node_like: None = None,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    require_confirmation: bool | Callable[..., bool] | None = None,
    parameter_binding: Literal["state", "node_input"] = "state",
) -> Callable[[Any], BaseNode]: ...


@overload
def node(
    node_like: Any,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    require_confirmation: bool | Callable[..., bool] | None = None,
    parameter_binding: Literal["state", "node_input"] = "state",
) -> BaseNode: ...


def node(
    node_like: Any = None,
    *,
    name: str | None = None,
    rerun_on_resume: bool | None = None,
    retry_config: RetryConfig | None = None,
    timeout: float | None = None,
    parallel_worker: bool = False,
    max_parallel_workers: int | None = None,
    require_confirmation: bool | Callable[..., bool] | None = None,
    parameter_binding: Literal["state", "node_input"] = "state",
) -> Any:
    """Make a node of a function, agent or tool (or change a node's settings).

    As a decorator: ``@node``, ``@node()`` or ``@node(name=..., retry_config=...)``; as a
    call: ``node(func, name="other")``. ``require_confirmation`` turns on
    ``rerun_on_resume`` unless it is given. ``parallel_worker=True`` runs the node once
    per item of a list input.

    Raises:
        WorkflowConfigurationError: ``max_parallel_workers`` without ``parallel_worker``,
            or below 1.
    """
    _check_workers(parallel_worker, max_parallel_workers)
    if node_like is None:

        def decorate(target: Any) -> BaseNode:
            decorated = cast(
                BaseNode,
                node(
                    target,
                    name=name,
                    rerun_on_resume=rerun_on_resume,
                    retry_config=retry_config,
                    timeout=timeout,
                    parallel_worker=parallel_worker,
                    max_parallel_workers=max_parallel_workers,
                    require_confirmation=require_confirmation,
                    parameter_binding=parameter_binding,
                ),
            )
            return decorated

        return decorate
    built = build_node(
        node_like,
        name=name,
        rerun_on_resume=rerun_on_resume if not parallel_worker else None,
        retry_config=None if parallel_worker else retry_config,
        timeout=None if parallel_worker else timeout,
        require_confirmation=require_confirmation,
        parameter_binding=parameter_binding,
    )
    if not parallel_worker:
        return built
    worker_fields: dict[str, Any] = {"max_parallel_workers": max_parallel_workers}
    if rerun_on_resume is not None:
        worker_fields["rerun_on_resume"] = rerun_on_resume
    if retry_config is not None:
        worker_fields["retry_config"] = retry_config
    if timeout is not None:
        worker_fields["timeout"] = timeout
    return ParallelWorker(built, **worker_fields)
