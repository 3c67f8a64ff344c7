/* labels: see labels.h. */
#include "labels.h"

#include <string.h>

int labels_same(const char *a, const char *b)
{
    return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

static const char *label_of(const struct server_summary *g, enum labels_axis axis)
{
    switch (axis) {
    case LABELS_SCENARIO: return g->scenario;
    case LABELS_VARIANT: return g->variant;
    case LABELS_SERVER: break;
    }
    return g->server;
}

size_t labels_distinct(const struct summary *s, enum labels_axis axis, const char **vals, size_t max)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n && n < max; k++) {
        const char *v = label_of(&s->rows[k], axis);
        size_t i = 0;
        while (i < n && !labels_same(vals[i], v))
            i++;
        if (i == n)
            vals[n++] = v;
    }
    return n;
}

size_t labels_index(const char *const *vals, size_t n, const char *v)
{
    for (size_t i = 0; i < n; i++)
        if (labels_same(vals[i], v))
            return i;
    return 0;
}

const struct server_summary *labels_find(const struct summary *s, const char *scenario, const char *variant,
                                         const char *server)
{
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (labels_same(g->scenario, scenario) && labels_same(g->variant, variant) && labels_same(g->server, server))
            return g;
    }
    return NULL;
}
