/*
 * pause: PID 1 of a pod sandbox in the node tests (confighash.local/pause:1).
 * It holds the pod's namespaces open and does nothing else: it sleeps until a
 * signal comes, reaps every child that exits (processes can be re-parented to
 * PID 1), and exits 0 on SIGINT or SIGTERM.
 *
 * Signals are blocked and taken synchronously with sigwaitinfo, so there is no
 * window between checking for work and sleeping, and no handler runs code that is
 * not async-signal-safe. As PID 1 the kernel delivers only signals it has a
 * disposition for, which sigwaitinfo on a blocked set provides.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

int main(void) {
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGCHLD);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGTERM);
  if (sigprocmask(SIG_BLOCK, &wanted, NULL) != 0) {
    perror("pause: sigprocmask");
    return 1;
  }

  for (;;) {
    siginfo_t info;
    int signo = sigwaitinfo(&wanted, &info);
    if (signo < 0) {
      if (errno == EINTR) {
        continue;
      }
      perror("pause: sigwaitinfo");
      return 1;
    }
    if (signo == SIGCHLD) {
      /* One SIGCHLD can stand for several exits: reap until none is left. */
      while (waitpid(-1, NULL, WNOHANG) > 0) {
      }
      continue;
    }
    fprintf(stderr, "pause: %s, exiting\n", strsignal(signo));
    return 0;
  }
}
