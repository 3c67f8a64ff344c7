/* gnuplot_run: one gnuplot picture, made as every plot of debit's is (--plot, its -rtt
 * sibling, debit history --plot): the data and the script in a private temporary folder,
 * gnuplot run bounded in time, rendering into the target's outfile (outfile.h: a device or
 * FIFO is written, a file replaced whole), the folder removed whatever happened. */
#ifndef DEBIT_GNUPLOT_RUN_H
#define DEBIT_GNUPLOT_RUN_H

#include <stddef.h>
#include <stdio.h>

/* What one picture writes; CTX is the caller's (it keeps the data files' names). */
struct gnuplot_writer {
    /* Write the data files into DIR (the private folder: every file in it is removed
     * afterwards). 0, or -1 with errno set. */
    int (*data)(void *ctx, const char *dir);
    /* Write the script to FP: the picture goes to OUT (what gnuplot must write), PATH is
     * the target as given (for titles and messages). 0, or -1 with errno set. */
    int (*script)(void *ctx, FILE *fp, const char *path, const char *out);
};

/* The script's first lines: the terminal PATH's extension names (.svg: SVG, else PNG),
 * WIDTH x HEIGHT pixels, and "set output OUT". */
void gnuplot_terminal(FILE *fp, const char *path, const char *out, unsigned width, unsigned height);
/* Make the picture PATH with W and CTX; TAG names the temporary folder
 * (/tmp/debit-TAG.XXXXXX). 0, or -1 with err filled: the folder's or the script's error,
 * outfile's, or "gnuplot failed on PATH (status N): its first error line". The caller has checked
 * that gnuplot is there (plot_check). */
int gnuplot_render(const char *path, const char *tag, const struct gnuplot_writer *w, void *ctx, char *err,
                   size_t errlen);

#endif
