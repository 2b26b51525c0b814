"""The only place in execbench that starts untrusted code.

    result = run(["./prog"], stdin="1 2\\n", files={"prog": blob}, collect=["out.txt"],
                 limits=Limits(wall_seconds=5))
    result.ok, result.reason(), result.stdout, result.files["out.txt"], result.isolation

Design
------
Parent P (this process) creates a fresh work dir under the temp dir, a cgroup v1 ``pids``
group, and starts the program with ``subprocess.Popen(preexec_fn=...)``. The setup runs in
the forked child C, before exec::

    P ─Popen─> C: unshare(NET|PID|IPC|NS|UTS) ─fork─> G (pid 1) ─fork─> H (pid n) ─exec─> program
               waits, re-raises G's status        joins cgroup,       new root + /proc,
                                                  reaps, reports H    Landlock, seccomp,
                                                                      fresh uid, rlimits

* C stays outside the new PID namespace (unshare(CLONE_NEWPID) only moves the caller's
  children); it waits for G and terminates exactly like the program did (exit code or the
  same signal). G is the namespace's init: it reaps orphans and, when the program exits,
  exits itself, which makes the kernel SIGKILL everything left in the namespace
  (double-forked / setsid daemons included). The program is not pid 1, so signals it
  sends itself behave normally. G dies with C (PR_SET_PDEATHSIG), and C with P.
* Tasks: G and its descendants are in the run's pids group, ``pids.max = max_tasks + 1``
  (G); this holds whatever the uid (RLIMIT_NPROC never binds root). ``pids.events`` tells
  whether a fork was refused (limit "tasks"). Joining a v1 cgroup waits for an RCU grace
  period (~4-11 ms of wall time here, no CPU) unless another join happened just before.
* Kill (timeout, output flood, exception in P): SIGKILL every task of the cgroup and C;
  then the group is removed (retrying while tasks exit) and the work dir deleted, always
  (try/finally).
* Network: own network namespace (only a downed loopback). Landlock (ABI >= 4) also denies
  TCP bind/connect, and (ABI >= 6) signals and abstract unix sockets leaving the sandbox.
  ``network_ports`` (package installs): the host's network, TCP connect() to those ports
  only (Landlock).
* System calls (seccomp): socket() only for AF_INET/AF_INET6 and only with a network
  (AF_UNIX to host daemons, AF_VSOCK to a hypervisor, netlink, packet, ... fail with
  EACCES; socketpair() works); keyctl/add_key/request_key (kernel keyrings are shared
  with the builder's session), unshare/clone with any CLONE_NEW* flag (user namespaces),
  setns, ptrace, process_vm_*, bpf, perf_event_open, userfaultfd, mount API, module,
  kexec, clock, swap, quota and handle calls fail with EPERM (Docker's default list);
  clone3 and io_uring with ENOSYS; foreign ABIs (int 0x80, x32) kill the process.
* Filesystem (reads and writes): a private mount namespace whose root is an empty
  read-only tmpfs holding bind mounts of only what a run needs, under their host paths:
  read-only (nosuid, nodev, recursively via mount_setattr) the system paths
  (SYSTEM_READ_PATHS: /usr, /bin, /lib*, /sbin, /etc), this interpreter's installation,
  the program's (argv[0]: a Python prefix and its venv's base, or the file), absolute
  PYTHONPATH entries and ``read_only_paths``; read-write the work dir and
  ``read_write_paths``; /dev/null, zero, full, (u)random; a procfs of the run's own PID
  namespace (hidepid=2). Homes, /root, the build cache, other processes and /tmp are not
  there. Landlock then allows reading/executing only those paths (listing any directory
  of the new root) and writing only the writable ones. Metadata writes (utime, setxattr,
  chmod) to anything but the work dir fail: read-only mounts, and files the uid does not
  own. /dev/shm is private to the run.
* Disk (issue 33): everything a run can write (the work dir = HOME = TMPDIR, /dev/shm and
  ``read_write_paths``) is one tmpfs of its own, at most ``disk_bytes`` (1 GiB) and
  ``disk_inodes`` (65,536 files) by default (``._disk``). It is a *detached* mount made by
  the parent (fsopen/fsmount: in no mount namespace of the host) and attached only in the
  run's namespace; the parent writes the run's files and collects through its descriptor,
  and the kernel frees it when the run is over. ``read_write_paths`` are copied onto it
  before the run and back after it (symlinks never followed, at most 128 levels). A run
  that used more than its limit ends with the limit "disk" (ENOSPC in a program that exits
  0 included); it is never the host's: nothing it writes is in the host's temp dir.
* Privileges (when run as root): the program runs as a fresh uid (unique per run, no
  passwd entry, no groups) that owns the work dir and its files, without any capability
  (bounding set emptied, NO_NEW_PRIVS, securebits locked): file permissions apply, so
  /etc/shadow and 0600 files are unreadable even where a path is visible, and
  read_write_paths are writable only if their permissions let any user write. Why not
  uid 0 without capabilities: uid 0 owns every system file (chmod, utime on them). Why
  no capabilities: root could setns() back into the host network via /proc/1/ns/net,
  read any file (DAC override), load kernel modules, mknod a disk device, remount, etc.
  The fresh uid also makes RLIMIT_NPROC bind.
* Host identity: each run has its own UTS namespace and host name, a time zone and a user
  name (USER, LOGNAME) that differ from the previous run's, a new uid, a new work dir path
  and pids that start at a random number (ns_last_pid), so repeated runs of a program that
  reads its host disagree and determinism checks reject it, while nothing marks the
  machine as a sandbox (no tiny pids, no missing USER or /dev/shm). Likewise what it sees
  of the machine (issue 33): the CPU count glibc reports (files of /sys/devices/system/cpu
  in the new root, /proc/cpuinfo, /proc/stat), the affinity mask, its rlimits, its
  Seccomp_filters count and extra mounts (/mnt, /media, /srv) differ from the previous
  run's (``_child._machine``, ``_affinity``), and so does its wall clock: a preload
  library moves CLOCK_REALTIME days ahead per run and per job (``._clock``; installs keep
  the real clock; ``isolation["clock"]``).
* Limits: the disk (above), RLIMIT_CPU (per process, rounded up to whole seconds; hard = soft + 1 s),
  RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_CORE=0, set last before exec. The wall
  clock is enforced by P. Which limit ended a run is read from the status: wall_time/output
  (P killed it), cpu_time (SIGXCPU, or SIGKILL with CPU >= limit), file_size (SIGXFSZ or
  EFBIG text in stderr), disk (the tmpfs's usage, or ENOSPC text), tasks (pids.events), memory (RLIMIT_AS has no signal: "MemoryError",
  "std::bad_alloc", "Cannot allocate memory" at the end of stderr of a failed run).
* Output: each of stdout/stderr keeps the first ``output_bytes``; more is read and dropped
  (no deadlock; ``*_truncated`` set). Past ``output_bytes + 64 MiB`` on one stream the run is
  killed with limit "output" (a ``while True: print()`` ends in ~0.1 s, not at the timeout).
* Environment: only ``env`` plus PATH (the interpreter's dir, /usr/local/bin, /usr/bin,
  /bin), HOME=TMPDIR=work dir, LANG=C.UTF-8; ``env`` may override these.
* Files: ``files`` are written before the run (relative paths only; content starting with
  ``\x7fELF`` or ``#!`` is made executable, so a binary collected from a compile run can be
  run again). ``collect`` reads regular files back without following symlinks, each up to
  ``file_size_bytes`` (the program cannot write more anyway); missing ones are absent.
  Work dirs are named ``execbench-<pid>-*``; those of a killed parent are removed by the
  next process's first capabilities() probe (cgroups likewise). Removal never raises and
  copes with any tree a program can make (_cleanup: 3,000-deep chains, unreadable dirs).
* Records: everything collected is hostile input; read it with :mod:`.records` (size and
  depth caps before parsing, field-by-field validation, RecordError only).
* Errors: the program's failures are results; a failure to set the sandbox up raises
  SandboxError (fail closed), a missing executable raises FileNotFoundError.

Not bounded: total memory of a run is max_tasks x memory_bytes (RLIMIT_AS is per process;
a memory cgroup would fix it, but this machine's memory hierarchy belongs to its
supervisor); without a new root (the "mntns" fallback, not root) the disk is the host's:
each file <= file_size_bytes, their number not bounded (``isolation["disk"]`` says
"file-size-only" instead of "tmpfs"). The run's tmpfs is memory: its limit counts towards
the machine's memory, not towards the run's RLIMIT_AS.

Fallbacks (chosen once per process by capabilities(); reported in ``result.isolation``):
no netns -> the seccomp filter refuses socket() for every family, and io_uring
("socket-blocked": all programs, kernel-enforced, UDP included); no Landlock -> the new
root alone confines reads and writes ("newroot"); no mount namespace (or "mntns" forced)
-> Landlock read rules confine reads, the fresh uid keeps CAP_DAC_READ_SEARCH (the
interpreter may sit below a 0700 /root) and may read only the world-readable files of
/etc, /proc is the host's but only its non-process entries and the program's own
/proc/<pid> are allowed ("landlock", "fresh-uid+cap_dac_read_search"); no PID namespace
-> /proc is mounted with hidepid=2 (other uids' processes invisible) and leftovers are
killed through the cgroup (or the uid) when the program exits; no cgroup -> the fresh
uid's RLIMIT_NPROC bounds tasks ("uid-nproc"; leftovers are killed by scanning /proc for
the uid). Not root -> no uid change, RLIMIT_NPROC (counts all of the user's processes),
Landlock read/write rules if available ("unprivileged"). Set
``EXECBENCH_SANDBOX_FORCE_FALLBACK`` to "all" (netns, pidns, ipcns, cgroup, landlock) or
to some of "netns,pidns,ipcns,cgroup,landlock,mntns" (not landlock and mntns together:
nothing would confine the filesystem) to exercise them.

Why preexec_fn and not a helper interpreter: starting a second Python costs ~30 ms here
(fork ~3 ms); the setup code between fork and exec only makes syscalls through objects
prepared at import time. The price: three forks copy P's page tables, so the cost grows
with the size of the calling process. Measured on this 2-core VM (``run(["/bin/true"])``
vs ``subprocess.run(["/bin/true"])``): ~20 ms CPU per run for a 17 MB parent, +~23 ms CPU
per extra 100 MB of parent RSS; wall ~26 ms median at load average 7, 80-140 ms at load
average 14 (forks, scheduling and the cgroup join's RCU wait). The new root (about 20 bind
mounts), the UTS namespace and the longer seccomp filter add ~1.5 ms CPU and ~10 ms wall
(benchmarks/sandbox_overhead.py, benchmarks/RESULTS.md). A fork server would remove the
dependence on the parent's size if callers grow large.
"""

from typing import TYPE_CHECKING, Any

__all__ = ["Limits", "SandboxResult", "SandboxError", "run", "run_python", "capabilities",
           "FORCE_FALLBACK_ENV", "preload_library"]

if TYPE_CHECKING:
    from ._run import (FORCE_FALLBACK_ENV, Limits, SandboxError, SandboxResult, capabilities, preload_library,
                       run, run_python)


def __getattr__(name: str) -> Any:
    """The public names come from ``._run`` on first use: the job runner, which runs inside
    the sandbox and imports ``execbench.sandbox._jobrunner``, never needs ``._run`` (its
    import costs ~40 ms, paid once per sandbox)."""
    if name in __all__:
        from . import _run
        return getattr(_run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
