# SPDX-License-Identifier: LGPL-2.1-or-later
# The types of the module fastrm (__init__.py), for type checkers.
import os
from typing import IO, Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Type, Union
from types import TracebackType

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Patterns = Union[_Path, Sequence[_Path]]
_Manifest = Union[_Path, IO[Any]]
_ExcInfo = Tuple[Optional[Type[BaseException]], Optional[BaseException], Optional[TracebackType]]

__version__: str

def rmtree(
    path: _Path,
    ignore_errors: bool = ...,
    onerror: Optional[Callable[[Callable[..., Any], str, _ExcInfo], object]] = ...,
    *,
    onexc: Optional[Callable[[Callable[..., Any], str, BaseException], object]] = ...,
    dir_fd: Optional[int] = ...,
    jobs: Optional[int] = ...,
    order: Optional[str] = ...,
    exclude: Optional[_Patterns] = ...,
    dry_run: bool = ...,
    manifest: Optional[_Manifest] = ...,
    manifest_format: str = ...,
    manifest_failures: bool = ...,
    max_rate: Optional[float] = ...,
    latency_target: Optional[float] = ...,
    detach: bool = ...,
) -> None: ...

class RemoveResult(NamedTuple):
    left: List[Tuple[Union[str, bytes], OSError]]
    stats: Dict[str, int]

def remove(
    paths: Sequence[_Path],
    *,
    dir_fd: Optional[int] = ...,
    missing_ok: bool = ...,
    one_file_system: bool = ...,
    jobs: Optional[int] = ...,
    order: Optional[str] = ...,
    exclude: Optional[_Patterns] = ...,
    dry_run: bool = ...,
    manifest: Optional[_Manifest] = ...,
    manifest_format: str = ...,
    manifest_failures: bool = ...,
    max_rate: Optional[float] = ...,
    latency_target: Optional[float] = ...,
) -> RemoveResult: ...

def pending() -> List[Dict[str, Any]]: ...

def finish(
    ids: Optional[Sequence[str]] = ...,
    *,
    jobs: Optional[int] = ...,
    max_rate: Optional[float] = ...,
    latency_target: Optional[float] = ...,
) -> RemoveResult: ...
