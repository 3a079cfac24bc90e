"""The wait for the disk of a state directory's commits, shared by the commits that end together
(``synchronous=FULL``: one ``fsync`` of the write-ahead log after the write lock is let go).
Apart from ``db`` so that each file stays small enough to read whole (issue 36)."""
from __future__ import annotations

import os
import threading

__all__ = ["GroupSync"]


class GroupSync:
    """The wait for the disk of the commits that must survive a power cut (``synchronous=FULL``),
    made after the commit, outside the write lock, and shared: an ``fsync`` of the write-ahead
    log begun after a commit puts it on disk with every commit before it, so the commits that end
    while one ``fsync`` runs wait for the next and share it (a group commit). What SQLite's FULL
    does inside each commit, under the lock, one ``fsync`` each. The committing thread goes on
    only once its commit is on disk; another may read it a little before (as it may read any
    commit of a ``normal`` database): a power cut in between loses both, the reader's effect
    included when it was written to this database after. An ``fsync`` that fails fails every
    commit it was for and every one after it, for good: the kernel may have dropped what it
    could not write, so a later ``fsync`` that succeeds proves nothing (the database is
    reopened, and read back, by a new process)."""

    def __init__(self, wal: str) -> None:
        self.wal = wal
        self._cond = threading.Condition()
        self._asked = 0  # commits that asked for the disk
        self._done = 0  # of them, the ones on disk
        self._running = False
        self._failed: OSError | None = None
        self._fd: tuple[int, int, int] | None = None  # descriptor, inode, pid

    def sync(self) -> None:
        """Return once every commit this thread made is on disk; ``OSError`` if it cannot be."""
        with self._cond:
            self._asked += 1
            ticket = self._asked
            while True:
                if self._failed is not None:
                    raise OSError(self._failed.errno, f"an fsync of {self.wal} failed before: {self._failed}")
                if self._done >= ticket:
                    return
                if not self._running:
                    self._running, upto = True, self._asked
                    break
                self._cond.wait()
        failed: OSError | None = None
        try:
            self._fsync()
        except OSError as exc:
            failed = exc
        finally:
            with self._cond:
                self._running = False
                if failed is None:
                    self._done = max(self._done, upto)
                else:
                    self._failed = failed
                self._cond.notify_all()
        if failed is not None:
            raise failed

    def _fsync(self) -> None:
        try:
            ino = os.stat(self.wal).st_ino
        except FileNotFoundError:
            return  # no log: every commit was checkpointed into the database, which SQLite synced
        fd = self._fd
        if fd is None or fd[1] != ino or fd[2] != os.getpid() or os.fstat(fd[0]).st_nlink == 0:
            if fd is not None and fd[2] == os.getpid():
                os.close(fd[0])
            fd = self._fd = (os.open(self.wal, os.O_RDONLY | os.O_CLOEXEC), ino, os.getpid())
        os.fsync(fd[0])

    def close(self) -> None:
        with self._cond:
            while self._running:  # not while a thread's fsync uses the descriptor
                self._cond.wait()
            fd, self._fd = self._fd, None
        if fd is not None and fd[2] == os.getpid():
            os.close(fd[0])
