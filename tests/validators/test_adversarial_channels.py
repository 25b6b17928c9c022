"""Issue 21, class 7: no channel between concurrent runs, and a system-call allow-list.

Two runs of the same check (or of two callers) execute at once and see the same read-only
folders. Directory notifications (`fcntl(F_NOTIFY)`) told a run when another read a file in
such a folder: one bit per interval, between runs that must not talk. The filter refuses them,
file leases with them, and every call it does not list (ENOSYS: "this kernel lacks it"), so a
call nobody thought to deny is no longer a way around the list. Honest uses of fcntl and of
glibc's fallbacks keep working.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
from pathlib import Path

import pytest
from c_programs import build_c_programs

from validators.sandbox import Limits, run_sandboxed, sandbox_mode
from validators.sandbox_launcher import syscall_policy

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed"),
    pytest.mark.skipif(sandbox_mode() != "namespaces+uid", reason="the filter is the C launcher's"),
]

FAST = Limits(cpu_seconds=4, wall_seconds=15, memory_bytes=256 << 20, file_size_bytes=1 << 20,
              max_processes=32, output_bytes=64 << 10)

PROGRAMS = {
    # Receiver: asks to be signalled when anything in the shared folder is read or changed,
    # then waits; prints whether the call worked and whether a signal came.
    "dnotify_receiver": r"""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <fcntl.h>
        #include <signal.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        static volatile sig_atomic_t got;
        static void on(int s) { (void)s; got = 1; }
        int main(int argc, char **argv) {
          struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on;
          sigaction(SIGIO, &sa, NULL);
          int fd = open(argv[1], O_RDONLY | O_DIRECTORY);
          if (fcntl(fd, F_NOTIFY, DN_ACCESS | DN_MODIFY | DN_CREATE | DN_MULTISHOT) == 0)
            printf("notify:ok\n");
          else printf("notify:%s\n", strerror(errno));
          fflush(stdout);
          for (int i = 0; i < 600 && !got; i++) usleep(10000);
          printf("bit:%d\n", (int)got);
          return 0; }""",
    # Sender: to send a 1, reads a file of the shared folder again and again for a while.
    "dnotify_sender": r"""
        #include <fcntl.h>
        #include <stdio.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
          char buf[16];
          for (int i = 0; i < 200; i++) {
            int fd = open(argv[1], O_RDONLY);
            if (fd >= 0) { if (read(fd, buf, sizeof buf) < 0) return 3; close(fd); }
            usleep(25000); }
          printf("sent\n");
          return 0; }""",
    # Leases: on a file the run owns (its work folder) and on a shared read-only one.
    "leaser": r"""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <fcntl.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        static void try(const char *what, int fd, int cmd, int arg) {
          int r = fcntl(fd, cmd, arg);
          printf("%s:%s\n", what, r >= 0 ? "ok" : strerrorname_np(errno)); }
        int main(int argc, char **argv) {
          int own = open("mine.txt", O_CREAT | O_WRONLY, 0644); close(own);
          own = open("mine.txt", O_RDONLY);
          try("setlease-own", own, F_SETLEASE, F_RDLCK);
          try("getlease-own", own, F_GETLEASE, 0);
          int shared = open(argv[1], O_RDONLY);
          try("setlease-shared", shared, F_SETLEASE, F_RDLCK);
          try("getlease-shared", shared, F_GETLEASE, 0);
          return 0; }""",
    # Calls outside the allow-list that the old deny-list let through, with harmless arguments.
    "unlisted": r"""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <stdio.h>
        #include <string.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        #include <linux/aio_abi.h>
        #include <linux/landlock.h>
        static void show(const char *name, long r) {
          printf("%s %s\n", name, r >= 0 ? "ok" : strerrorname_np(errno)); }
        int main(void) {
          aio_context_t ctx = 0;
          show("io_setup", syscall(SYS_io_setup, 1, &ctx));
          show("landlock_create_ruleset",
               syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION));
          char ldt[16];
          show("modify_ldt", syscall(SYS_modify_ldt, 0, ldt, sizeof ldt));
          long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
          show("pidfd_getfd", syscall(SYS_pidfd_getfd, pidfd, 1, 0));
          show("process_madvise", syscall(SYS_process_madvise, pidfd, NULL, 0, 0, 0));
          show("memfd_secret", syscall(447, 0));
          show("cachestat", syscall(451, 0, NULL, NULL, 0));
          return 0; }""",
    # An honest program's fcntl use, record locks included, and a thread (glibc's pthread_create
    # tries clone3 first and falls back to clone on ENOSYS).
    "honest_fcntl": r"""
        #define _GNU_SOURCE
        #include <fcntl.h>
        #include <pthread.h>
        #include <stdio.h>
        #include <unistd.h>
        static void *work(void *p) { *(int *)p = 42; return NULL; }
        int main(void) {
          int p[2]; if (pipe(p)) return 2;
          int fl = fcntl(p[0], F_GETFL);
          int ok = fl >= 0 && fcntl(p[0], F_SETFL, fl | O_NONBLOCK) == 0
                && (fcntl(p[0], F_GETFL) & O_NONBLOCK)
                && fcntl(p[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(p[0], F_GETFD) == FD_CLOEXEC
                && fcntl(p[1], F_DUPFD_CLOEXEC, 10) >= 10 && fcntl(p[1], F_GETPIPE_SZ) > 0;
          int f = open("data.bin", O_CREAT | O_RDWR, 0644);
          struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
          ok = ok && fcntl(f, F_SETLK, &lk) == 0 && fcntl(f, F_SETLKW, &lk) == 0;
          pthread_t t; int v = 0;
          ok = ok && pthread_create(&t, NULL, work, &v) == 0 && pthread_join(t, NULL) == 0 && v == 42;
          printf(ok ? "honest:ok\n" : "honest:broken\n");
          return !ok; }""",
}


@pytest.fixture(scope="module")
def bins(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("channels")
    return build_c_programs(folder, PROGRAMS)


@pytest.fixture
def shared_folder():
    """A read-only folder both runs see (root's, world-readable), as a task's data would be,
    and outside the paths other work on this machine touches (so no foreign event)."""
    folder = Path("/var/tmp") / f"ckd-shared-{os.getpid()}"
    folder.mkdir(mode=0o755)
    (folder / "data.txt").write_text("shared input\n")
    os.chmod(folder / "data.txt", 0o644)
    yield folder
    shutil.rmtree(folder)


def _work(tmp_path: Path, name: str) -> Path:
    w = tmp_path / name
    w.mkdir()
    return w


def test_directory_notifications_carry_no_bit_between_concurrent_runs(bins, shared_folder,
                                                                      tmp_path):
    got = {}

    def receive() -> None:
        got["rx"] = run_sandboxed([str(bins["dnotify_receiver"]), str(shared_folder)],
                                  _work(tmp_path, "rx"), limits=FAST, expose=[shared_folder])

    rx = threading.Thread(target=receive)
    rx.start()
    tx = run_sandboxed([str(bins["dnotify_sender"]), str(shared_folder / "data.txt")],
                       _work(tmp_path, "tx"), limits=FAST, expose=[shared_folder])
    rx.join()
    assert tx.exit_code == 0 and tx.stdout.strip() == "sent", (tx.stdout, tx.stderr)
    lines = dict(line.split(":", 1) for line in got["rx"].stdout.splitlines())
    # The sender read the folder throughout the receiver's wait: a working F_NOTIFY sees it.
    assert lines["notify"] == os.strerror(errno.EPERM), got["rx"].stdout
    assert lines["bit"] == "0", got["rx"].stdout


def test_file_leases_are_refused(bins, shared_folder, tmp_path):
    out = run_sandboxed([str(bins["leaser"]), str(shared_folder / "data.txt")],
                        _work(tmp_path, "w"), limits=FAST, expose=[shared_folder])
    got = dict(line.split(":", 1) for line in out.stdout.splitlines())
    assert got == {"setlease-own": "EPERM", "getlease-own": "EPERM",
                   "setlease-shared": "EPERM", "getlease-shared": "EPERM"}, out.stdout


def test_calls_outside_the_allow_list_fail(bins, tmp_path):
    out = run_sandboxed([str(bins["unlisted"])], _work(tmp_path, "w"), limits=FAST)
    got = dict(line.split() for line in out.stdout.splitlines())
    assert len(got) == 7, out.stdout
    for name, answer in got.items():
        # refused by name (EPERM) or unlisted (ENOSYS), whatever the kernel would have said
        want = "EPERM" if syscall_policy(name) == "eperm" else "ENOSYS"
        assert answer == want, (name, answer, out.stdout)


def test_honest_fcntl_and_threads_still_work(bins, tmp_path):
    out = run_sandboxed([str(bins["honest_fcntl"])], _work(tmp_path, "w"), limits=FAST)
    assert out.exit_code == 0 and out.stdout.strip() == "honest:ok", (out.stdout, out.stderr)
