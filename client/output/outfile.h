/* outfile: where debit writes a file it was told to write (-o, --plot and its -rtt
 * sibling). A regular file, or a name not there yet, is replaced atomically
 * (sys_atomic: a temporary file beside it, renamed over it); a symlink is followed, so
 * its target is replaced and the link stays; anything else that exists (a character
 * device such as /dev/null or /dev/stdout's terminal, a FIFO, a socket) is written
 * directly, as a shell's `>` would: renaming over it would replace the device or pipe
 * with a regular file. */
#ifndef DEBIT_OUTFILE_H
#define DEBIT_OUTFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "sys.h"

struct outfile {
    struct sys_atomic a;  /* the atomic replacement, when not direct */
    FILE *fp;             /* direct: the file itself */
    int direct;
    char path[PATH_MAX];  /* as given, for messages */
    char fd_path[32];     /* direct: /dev/fd/N of fp, inherited by a child such as gnuplot */
};

/* Open path for writing as described above. Returns the FILE (owned by o), or NULL with
 * "PATH: why" in err. */
FILE *outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);
/* The name another program (gnuplot) must write to: the temporary file, or /dev/fd/N of
 * the open file (inherited: /dev/stdout would be the child's own stdout). */
const char *outfile_write_path(const struct outfile *o);
/* Flush and close; a replacement is renamed into place. 0, or -1 with err filled. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
/* Give up: close, and remove a temporary file. Fine after a commit or a failed open. */
void outfile_abort(struct outfile *o);
/* Before a measurement: can path be written so (a directory: no)? Creates nothing that
 * stays. 0, or -1 with err filled. */
int outfile_check(const char *path, char *err, size_t errlen);

#endif
