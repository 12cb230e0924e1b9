"""``spawn`` and ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` new processes and wait for them; a child's
exception comes back to the parent as ``ProcessRaisedException`` carrying the child's traceback, as text.

Each child gets a file to write its traceback to (pickled); an empty or absent file means it did not raise. The
parent waits on the processes' sentinels; at the first failure it stops the others (SIGTERM, then SIGKILL after a
grace period) and raises the first failure's cause. Intended difference: PyTorch's children also ask Linux to
send them SIGINT when the parent dies (``prctl(PR_SET_PDEATHSIG)``, from its C extension); gradiente's do not.
"""
import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import warnings

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException", "ProcessRaisedException", "spawn",
           "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A child process failed: ``error_index`` is its index, ``error_pid`` its process id."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A child process raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child process exited with a non-zero code (``exit_code``) or was killed by a signal (``signal_name``)."""

    __slots__ = ["exit_code"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_file):
    """What each child runs: ``fn(i, *args)``, its traceback written to ``error_file`` if it raises."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass                # the parent stopped this process
    except Exception:
        import traceback
        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes started by ``start_processes(join=False)``; ``join()`` waits for them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout):
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout=None, grace_period=None):
        """Waits up to ``timeout`` seconds for a process to finish. Returns True once all have exited cleanly,
        False while some still run; if one failed, stops the others (after ``grace_period``) and raises
        ``ProcessRaisedException`` or ``ProcessExitedException``."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        self._stop_all(grace_period)
        self._raise_failure(error_index)
        return False    # not reached: _raise_failure raises

    def _stop_all(self, grace_period):
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting via SIGKILL", process.pid)
                process.kill()
            process.join()

    def _raise_failure(self, error_index):
        failed = self.processes[error_index]
        if not os.access(self.error_files[error_index], os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(f"process {error_index:d} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=exitcode,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index:d} terminated with exit code {exitcode:d}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=exitcode)
        with open(self.error_files[error_index], "rb") as fh:
            original_trace = pickle.load(fh)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n" + original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """The old name of ``ProcessContext``."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes running ``fn(i, *args)`` with ``start_method`` ('spawn', 'fork' or
    'forkserver'); waits for them if ``join``, else returns their ``ProcessContext``. (PyTorch's parallel start
    for forkserver, ``TORCH_MP_PARALLEL_START=1``, starts them one after the other here.)"""
    context = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        # a name for the child's traceback file; the child creates the file only if it raises
        handle, error_file = tempfile.mkstemp(prefix="pytorch-errorfile-", suffix=".pickle")
        os.close(handle)
        os.unlink(error_file)
        process = context.Process(target=_wrap, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        error_files.append(error_file)
        processes.append(process)
    process_context = ProcessContext(processes, error_files)
    if not join:
        return process_context
    while not process_context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes with the 'spawn' method running ``fn(i, *args)`` (``fn`` must be importable:
    defined at the top level of a module), as ``start_processes``; another ``start_method`` only warns."""
    if start_method != "spawn":
        msg = (f"This method only supports start_method=spawn (got: {start_method}).\n"
               "To use a different start_method use:\n\t\t torch.multiprocessing.start_processes(...)")
        warnings.warn(msg, FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
