/* gnuplot_run: see gnuplot_run.h. */
#include "gnuplot_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "outfile.h"
#include "plot_int.h"
#include "sys.h"

extern char **environ;

/* The bound on one gnuplot run. */
#define GNUPLOT_TIMEOUT_MS 30000

void gnuplot_terminal(FILE *fp, const char *path, const char *out, unsigned width, unsigned height)
{
    const char *dot = strrchr(path, '.');
    int svg = dot && strcmp(dot, ".svg") == 0;
    fprintf(fp, "set terminal %s size %u,%u font \"sans,11\"\n",
            svg ? "svg dynamic noenhanced background rgb \"white\"" : "pngcairo noenhanced background rgb \"white\"",
            width, height);
    fputs("set output ", fp);
    plot_qstr(fp, out);
    fputc('\n', fp);
}

/* Run gnuplot on SCRIPT, stderr into ERRFILE, bounded in time. Returns the exit status, -1
 * when it could not start, was killed by a signal or ran out of time. */
static int run_gnuplot(const char *script, const char *errfile)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    /* posix_spawnp's argv is char *const[]: writable copies, not casts of const strings */
    char prog[] = "gnuplot", *arg = strdup(script);
    if (!arg) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    char *argv[] = {prog, arg, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(arg);
    if (rc != 0)
        return -1;
    int st = 0;
    if (!sys_reap_child_ms(pid, GNUPLOT_TIMEOUT_MS, &st))
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* "gnuplot failed on PATH (status ST)" with the first error or warning line of ERRFILE. */
static int gnuplot_failed(const char *path, int st, const char *errfile, char *err, size_t errlen)
{
    char line[256] = "";
    FILE *ef = fopen(errfile, "r");
    while (ef && fgets(line, sizeof line, ef))
        if (strstr(line, "rror") || strstr(line, "arning"))
            break;
    if (ef)
        fclose(ef);
    line[strcspn(line, "\n")] = 0;
    return err_set(err, errlen, "gnuplot failed on %s (status %d)%s%s", path, st, line[0] ? ": " : "", line);
}

/* Remove DIR and what is in it (only files: the writers make no folders). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* In DIR: the data, the script, gnuplot into PIC's file. */
static int render_in(const char *dir, const char *path, const struct gnuplot_writer *w, void *ctx,
                     struct outfile *pic, char *err, size_t errlen)
{
    char script[96], errfile[96];
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    snprintf(errfile, sizeof errfile, "%s/err", dir);
    FILE *fp = NULL;
    if (w->data(ctx, dir) != 0 || !(fp = fopen(script, "w")))
        return err_set(err, errlen, "%s: %s", dir, strerror(errno));
    if (!outfile_open(pic, path, err, errlen)) {
        fclose(fp);
        return -1;
    }
    /* fclose whatever the script returned: the FILE must not leak on a write error */
    int wrc = w->script(ctx, fp, path, outfile_write_path(pic));
    int e = errno;
    if (fclose(fp) != 0 && wrc == 0) {
        wrc = -1;
        e = errno;
    }
    if (wrc != 0)
        return err_set(err, errlen, "%s: %s", script, strerror(e));
    int st = run_gnuplot(script, errfile);
    if (st != 0)
        return gnuplot_failed(path, st, errfile, err, errlen);
    return outfile_commit(pic, err, errlen);
}

int gnuplot_render(const char *path, const char *tag, const struct gnuplot_writer *w, void *ctx, char *err,
                   size_t errlen)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/debit-%s.XXXXXX", tag);
    if (!mkdtemp(dir))
        return err_set(err, errlen, "temporary directory: %s", strerror(errno));
    /* gnuplot renders into the temporary file beside the target that `pic` holds open;
     * committing it makes the picture appear whole (a reader never sees half of one) */
    struct outfile pic = {0};
    int rc = render_in(dir, path, w, ctx, &pic, err, errlen);
    outfile_abort(&pic); /* nothing left to do after a commit */
    remove_dir(dir);
    return rc;
}
