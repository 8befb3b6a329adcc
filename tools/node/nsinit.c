/*
 * nsinit: PID 1 of a local node run's namespaces (tools/cluster/node.ts).
 *
 * The run lives in new PID, network and mount namespaces made by
 * `unshare --pid --fork --net --mount` with this as their first process. When
 * PID 1 of a PID namespace exits, the kernel kills every other process in it,
 * and the network and mount namespaces go with the last of them: bridge,
 * routes, addresses and every mount of the run disappear, however the run
 * ended. So nsinit's one job is to exit when the run is over:
 *   - on SIGTERM or SIGINT (a graceful stop), or
 *   - when its standard input reaches end of file: that pipe's other end is
 *     held only by the process that started the run, so EOF means that process
 *     is gone, even after SIGKILL.
 * Meanwhile it reaps the orphans re-parented to it (containerd's shims).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal = 0;

static void on_stop(int signo) { stop_signal = signo; }

static void on_child(int signo) {
  (void)signo;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

static int install(int signo, void (*handler)(int), int flags) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset(&action.sa_mask);
  return sigaction(signo, &action, NULL);
}

int main(void) {
  if (install(SIGTERM, on_stop, 0) < 0 || install(SIGINT, on_stop, 0) < 0 ||
      install(SIGCHLD, on_child, SA_NOCLDSTOP | SA_RESTART) < 0) {
    perror("nsinit: sigaction");
    return 2;
  }
  char buffer[64];
  while (!stop_signal) {
    ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0) return 0; /* the starter is gone */
    if (n < 0 && errno != EINTR) {
      perror("nsinit: read");
      return 1;
    }
  }
  return 0;
}
