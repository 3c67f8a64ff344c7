/* escape: see escape.h. */
#include "escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid, printable UTF-8 sequence at p (1..4), or 0 when the byte at p must
 * be escaped (control, DEL, C1, not valid UTF-8). */
static size_t printable_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c >= 0x20 && c < 0x7f)
        return 1;
    if (c < 0xc2 || c > 0xf4) /* C0, DEL, continuation bytes, overlong C0/C1 leads, > U+10FFFF */
        return 0;
    size_t n = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    uint32_t cp = c & (0x7f >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    if (cp < 0xa0) /* C1: U+0080..U+009F */
        return 0;
    return n;
}

/* The escape of the single byte c into out (at most 4 bytes + NUL); its length. */
static size_t escape_byte(unsigned char c, char out[5])
{
    static const char hex[] = "0123456789abcdef";
    switch (c) {
    case '\\': memcpy(out, "\\\\", 3); return 2;
    case '\t': memcpy(out, "\\t", 3); return 2;
    case '\n': memcpy(out, "\\n", 3); return 2;
    case '\r': memcpy(out, "\\r", 3); return 2;
    }
    out[0] = '\\';
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    out[4] = 0;
    return 4;
}

/* Calls emit(piece, len, ud) for each unit of the escaped text of src (a run of bytes
 * that pass, or one escape); stops early when emit returns non-zero. Returns the total
 * escaped length of what was emitted. */
typedef int (*emit_fn)(const char *piece, size_t len, void *ud);

static size_t walk(const char *src, emit_fn emit, void *ud)
{
    const unsigned char *p = (const unsigned char *)(src ? src : "");
    size_t total = 0;
    while (*p) {
        size_t n = *p == '\\' ? 0 : printable_len(p);
        char esc[5];
        const char *piece = (const char *)p;
        if (n == 0) {
            n = 1;
            size_t l = escape_byte(*p, esc);
            if (emit(esc, l, ud))
                return total;
            total += l;
        } else {
            if (emit(piece, n, ud))
                return total;
            total += n;
        }
        p += n;
    }
    return total;
}

struct buf {
    char *dst;
    size_t len, used, need;
};

static int to_buf(const char *piece, size_t n, void *ud)
{
    struct buf *b = ud;
    b->need += n;
    /* Whole pieces only: a cut never splits an escape or a character. */
    if (b->dst && b->used + n < b->len) {
        memcpy(b->dst + b->used, piece, n);
        b->used += n;
    } else {
        b->dst = NULL; /* full: keep counting */
    }
    return 0;
}

size_t escape_text(char *dst, size_t dstlen, const char *src)
{
    struct buf b = {dstlen ? dst : NULL, dstlen, 0, 0};
    walk(src, to_buf, &b);
    if (dstlen)
        dst[b.used] = 0;
    return b.need;
}

char *escape_dup(const char *src)
{
    if (!src)
        return NULL;
    size_t n = escape_text(NULL, 0, src);
    char *s = malloc(n + 1);
    if (s)
        escape_text(s, n + 1, src);
    return s;
}

static int any(const char *piece, size_t n, void *ud)
{
    (void)n;
    /* An escape starts with a backslash; a passing run never does (backslash is escaped). */
    if (piece[0] == '\\') {
        *(int *)ud = 1;
        return 1;
    }
    return 0;
}

int escape_needed(const char *src)
{
    int found = 0;
    walk(src, any, &found);
    return found;
}

struct file {
    FILE *out;
    int failed;
};

static int to_file(const char *piece, size_t n, void *ud)
{
    struct file *f = ud;
    if (fwrite(piece, 1, n, f->out) != n) {
        f->failed = 1;
        return 1;
    }
    return 0;
}

int escape_fputs(const char *src, FILE *out)
{
    struct file f = {out, 0};
    walk(src, to_file, &f);
    return f.failed ? EOF : 0;
}
