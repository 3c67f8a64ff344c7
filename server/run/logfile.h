/* logfile: the access log's file (log.access), opened so that the user debitd runs as can
 * open it again later (SIGUSR1, a reload): debitd -t creates nothing (it checks, as that
 * user, that the file or its directory is writable); a start as root with `user` creates a
 * missing file and gives it to the user before the privilege drop; a file the user could
 * not reopen is refused at once, naming its owner and the fix. Never blocks on a FIFO
 * (sys_open_regular): only a regular file or a character device (/dev/stderr) is a log. */
#ifndef DEBITD_LOGFILE_H
#define DEBITD_LOGFILE_H

#include <stddef.h>
#include <stdio.h>

#include "config.h"

/* Can the user debitd runs as (after the drop: the configured user when started as root)
 * append to C's log.access, now and when it reopens it? Creates nothing. "-" and "off"
 * pass. An existing path must be a regular file or a character device that user may write;
 * a missing one needs a directory the user may create files in, or, when root creates the
 * file for the user at start, one the user can reach (WARN then says that a rotation must
 * create the new file for the user; WARN may be NULL, "" when nothing to say). An action:
 * 0, or -1 with "FILE:LINE: log.access: ..." naming the owner and the fix. */
int logfile_check(const struct config *c, char *warn, size_t warnlen, char *err, size_t errlen);

/* Open C's log.access for appending into *OUT: NULL for "off", stderr for "-", else the
 * file, created (mode 0666 less the umask) when missing and then, when debitd runs as root
 * and will drop to `user`, given to that user. An action: 0, or -1 with err. */
int logfile_open(const struct config *c, FILE **out, char *err, size_t errlen);

/* Open PATH again (by name: after logrotate moved it) onto the descriptor FD in one step
 * (dup3): a line being written goes whole to the old file or the new one. An action: 0,
 * or -1 with "log.access: cannot reopen \"PATH\": reason" (FD unchanged). */
int logfile_reopen(const char *path, int fd, char *err, size_t errlen);

#endif
