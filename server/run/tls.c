/* tls: see tls.h. */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "sys.h"

#define TLS_MAX_CHAIN 16
#define TLS_MAX_FILE (1 << 20) /* a PEM chain or key beyond 1 MiB is not one */

/* One certificate chain and its key, immutable once built; freed with its last reference. */
struct tls_creds {
    _Atomic unsigned refs;
    gnutls_pcert_st pcert[TLS_MAX_CHAIN];
    unsigned n_pcert;
    gnutls_privkey_t key;
    char subject[512];
    time_t not_after;
    struct tls_creds *retired_next; /* tls_listener.retired */
};

struct tls_listener {
    pthread_mutex_t mu; /* guards cur and the counters below */
    struct tls_creds *cur;
    char *cert_path;
    char *priorities;
    char versions[8][16]; /* what the priorities allow, newest first ("TLS1.3") */
    unsigned n_versions;
    unsigned reloads;
    time_t loaded_at;
    /* The session-ticket master key (gnutls_session_ticket_key_generate), made once per
     * listener at start and kept for its life: a reload swaps the certificate, not the
     * tickets clients hold. GnuTLS derives the key that actually encrypts tickets from it,
     * a new one every ticket lifetime (TOTP over the master key, lib/stek.c), and still
     * accepts the previous one: forward secrecy for old tickets without a timer here. */
    gnutls_datum_t ticket_key;
    int keep_retired;           /* tls_listener_keep_retired */
    struct tls_creds *retired;  /* replaced credentials, one reference each, until the free */
};

static void creds_unref(struct tls_creds *c)
{
    if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    for (unsigned i = 0; i < c->n_pcert; i++)
        gnutls_pcert_deinit(&c->pcert[i]);
    gnutls_privkey_deinit(c->key);
    free(c);
}

/* PATH's bytes into D (malloc'd, NUL-terminated). */
static int read_file(const char *path, gnutls_datum_t *d, char *err, size_t errlen)
{
    int fd = sys_open_regular(path, O_RDONLY, 0, 0, NULL, err, errlen); /* never blocks on a FIFO */
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > TLS_MAX_FILE) {
        close(fd);
        return err_set(err, errlen, "\"%s\" is not a regular file of at most 1 MiB", path);
    }
    unsigned char *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t r = read(fd, b + got, (size_t)st.st_size - got);
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(b);
            close(fd);
            return err_set(err, errlen, "cannot read \"%s\": %s", path, strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    if (!b)
        return err_set(err, errlen, "out of memory");
    b[got] = 0;
    d->data = b;
    d->size = (unsigned)got;
    return 0;
}

/* DER of a public key, for comparing the certificate's with the private key's. */
static int pubkey_der(gnutls_pubkey_t pk, gnutls_datum_t *out)
{
    return gnutls_pubkey_export2(pk, GNUTLS_X509_FMT_DER, out) < 0 ? -1 : 0;
}

static int key_matches(gnutls_pcert_st *leaf, gnutls_privkey_t key)
{
    gnutls_pubkey_t pk;
    if (gnutls_pubkey_init(&pk) < 0)
        return 0;
    gnutls_datum_t a = {0}, b = {0};
    int ok = gnutls_pubkey_import_privkey(pk, key, 0, 0) == 0 && pubkey_der(pk, &a) == 0 &&
             pubkey_der(leaf->pubkey, &b) == 0 && a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    gnutls_free(a.data);
    gnutls_free(b.data);
    gnutls_pubkey_deinit(pk);
    return ok;
}

static void cert_facts(struct tls_creds *c)
{
    gnutls_x509_crt_t crt;
    snprintf(c->subject, sizeof c->subject, "?");
    if (gnutls_x509_crt_init(&crt) < 0)
        return;
    if (gnutls_x509_crt_import(crt, &c->pcert[0].cert, GNUTLS_X509_FMT_DER) == 0) {
        gnutls_datum_t dn = {0};
        if (gnutls_x509_crt_get_dn3(crt, &dn, 0) == 0) {
            snprintf(c->subject, sizeof c->subject, "%.*s", (int)dn.size, (const char *)dn.data);
            gnutls_free(dn.data);
        }
        c->not_after = gnutls_x509_crt_get_expiration_time(crt);
    }
    gnutls_x509_crt_deinit(crt);
}

/* Read and check CERT and KEY into new credentials (one reference), or NULL with err and
 * *field set to the setting at fault. */
static struct tls_creds *creds_load(const char *cert, const char *key, enum tls_field *field, char *err,
                                    size_t errlen)
{
    gnutls_datum_t cd = {0}, kd = {0};
    struct tls_creds *c = NULL;
    int r;
    *field = TLS_FIELD_CERT;
    if (read_file(cert, &cd, err, errlen) < 0)
        return NULL;
    if (!(c = calloc(1, sizeof *c))) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    atomic_init(&c->refs, 1);
    c->n_pcert = TLS_MAX_CHAIN;
    r = gnutls_pcert_list_import_x509_raw(c->pcert, &c->n_pcert, &cd, GNUTLS_X509_FMT_PEM,
                                          GNUTLS_X509_CRT_LIST_IMPORT_FAIL_IF_EXCEED);
    if (r < 0 || c->n_pcert == 0) {
        c->n_pcert = 0;
        err_set(err, errlen, "\"%s\" holds no PEM certificate (or more than %d): %s", cert, TLS_MAX_CHAIN,
                gnutls_strerror(r));
        goto fail;
    }
    *field = TLS_FIELD_KEY;
    if (read_file(key, &kd, err, errlen) < 0)
        goto fail;
    if (gnutls_privkey_init(&c->key) < 0) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    r = gnutls_privkey_import_x509_raw(c->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    if (r < 0) {
        err_set(err, errlen, "\"%s\" holds no unencrypted PEM private key: %s", key, gnutls_strerror(r));
        goto fail;
    }
    if (!key_matches(&c->pcert[0], c->key)) {
        err_set(err, errlen, "the key in \"%s\" does not match the certificate in \"%s\"", key, cert);
        goto fail;
    }
    cert_facts(c);
    free(cd.data);
    explicit_bzero(kd.data, kd.size);
    free(kd.data);
    return c;
fail:
    free(cd.data);
    if (kd.data)
        explicit_bzero(kd.data, kd.size);
    free(kd.data);
    creds_unref(c);
    return NULL;
}

/* The TLS versions a priority string allows, newest first. */
static int priorities_check(const char *prio, struct tls_listener *t, char *err, size_t errlen)
{
    gnutls_priority_t p;
    const char *pos = NULL;
    int r = gnutls_priority_init(&p, prio, &pos);
    if (r < 0)
        return err_set(err, errlen, "not a valid GnuTLS priority string (at \"%s\"): %s", pos ? pos : prio,
                       gnutls_strerror(r));
    const unsigned int *list = NULL;
    int n = gnutls_priority_protocol_list(p, &list);
    unsigned tls = 0;
    for (int i = 0; i < n; i++) {
        const char *name = gnutls_protocol_get_name((gnutls_protocol_t)list[i]);
        if (!name || strncmp(name, "TLS", 3) != 0)
            continue; /* DTLS: not for a TCP listener */
        if (t && tls < sizeof t->versions / sizeof t->versions[0])
            snprintf(t->versions[tls], sizeof t->versions[0], "%s", name);
        tls++;
    }
    gnutls_priority_deinit(p);
    if (tls == 0)
        return err_set(err, errlen, "\"%s\" allows no TLS version", prio);
    if (t)
        t->n_versions = tls < 8 ? tls : 8;
    return 0;
}

int tls_available(char *err, size_t errlen)
{
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return err_set(err, errlen, "this libmicrohttpd was built without TLS (GnuTLS) support");
    if (MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) != MHD_YES)
        return err_set(err, errlen, "this libmicrohttpd lacks MHD_OPTION_HTTPS_CERT_CALLBACK");
    return 0;
}

int tls_check(const char *cert, const char *key, const char *priorities, enum tls_field *field, char *err,
              size_t errlen)
{
    *field = TLS_FIELD_CERT;
    if (tls_available(err, errlen) < 0)
        return -1;
    struct tls_creds *c = creds_load(cert, key, field, err, errlen);
    if (!c)
        return -1;
    creds_unref(c);
    *field = TLS_FIELD_PRIORITIES;
    return priorities_check(priorities ? priorities : TLS_DEFAULT_PRIORITIES, NULL, err, errlen);
}

struct tls_listener *tls_listener_new(const char *cert, const char *key, const char *priorities, char *err,
                                      size_t errlen)
{
    enum tls_field f;
    if (tls_available(err, errlen) < 0)
        return NULL;
    struct tls_listener *t = calloc(1, sizeof *t);
    if (!t) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    t->cert_path = strdup(cert);
    t->priorities = strdup(priorities ? priorities : TLS_DEFAULT_PRIORITIES);
    if (!t->cert_path || !t->priorities) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    if (priorities_check(t->priorities, t, err, errlen) < 0 || !(t->cur = creds_load(cert, key, &f, err, errlen)))
        goto fail;
    int r = gnutls_session_ticket_key_generate(&t->ticket_key);
    if (r < 0) {
        err_set(err, errlen, "session ticket key: %s", gnutls_strerror(r));
        goto fail;
    }
    t->loaded_at = time(NULL);
    return t;
fail:
    tls_listener_free(t);
    return NULL;
}

void tls_listener_free(struct tls_listener *t)
{
    if (!t)
        return;
    creds_unref(t->cur);
    if (t->ticket_key.data) {
        gnutls_memset(t->ticket_key.data, 0, t->ticket_key.size);
        gnutls_free(t->ticket_key.data);
    }
    while (t->retired) {
        struct tls_creds *c = t->retired;
        t->retired = c->retired_next;
        creds_unref(c);
    }
    free(t->cert_path);
    free(t->priorities);
    pthread_mutex_destroy(&t->mu);
    free(t);
}

int tls_reload(struct tls_listener *t, const char *cert, const char *key, char *err, size_t errlen)
{
    enum tls_field f;
    char *path = strdup(cert);
    struct tls_creds *c = path ? creds_load(cert, key, &f, err, errlen) : NULL;
    if (!c) {
        if (!path)
            err_set(err, errlen, "out of memory");
        free(path);
        return -1;
    }
    pthread_mutex_lock(&t->mu);
    struct tls_creds *old = t->cur;
    t->cur = c;
    free(t->cert_path);
    t->cert_path = path;
    t->reloads++;
    t->loaded_at = time(NULL);
    if (t->keep_retired) { /* a handshake may be using it with no reference of its own */
        old->retired_next = t->retired;
        t->retired = old;
        old = NULL;
    }
    pthread_mutex_unlock(&t->mu);
    creds_unref(old); /* freed now unless a connection still holds it */
    return 0;
}

void tls_session_tickets(struct tls_listener *t, gnutls_session_t session)
{
    if (t->ticket_key.data)
        gnutls_session_ticket_enable_server(session, &t->ticket_key);
}

/* The listener whose credentials were last taken on this thread: a libmicrohttpd worker
 * thread serves one daemon, so one listener (tls_thread_cert). */
static __thread struct tls_listener *thread_listener;

struct tls_creds *tls_creds_take(struct tls_listener *t)
{
    thread_listener = t;
    pthread_mutex_lock(&t->mu);
    struct tls_creds *c = t->cur;
    atomic_fetch_add(&c->refs, 1);
    pthread_mutex_unlock(&t->mu);
    return c;
}

void tls_creds_release(struct tls_creds *c)
{
    creds_unref(c);
}

int tls_creds_cert(const struct tls_creds *c, gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key)
{
    if (!c)
        return -1;
    *pcert = (gnutls_pcert_st *)c->pcert;
    *n = c->n_pcert;
    *key = c->key;
    return 0;
}

int tls_thread_cert(gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key)
{
    struct tls_listener *t = thread_listener;
    if (!t)
        return -1;
    pthread_mutex_lock(&t->mu);
    struct tls_creds *c = t->cur;
    pthread_mutex_unlock(&t->mu);
    return tls_creds_cert(c, pcert, n, key);
}

void tls_listener_keep_retired(struct tls_listener *t)
{
    pthread_mutex_lock(&t->mu);
    t->keep_retired = 1;
    pthread_mutex_unlock(&t->mu);
}

unsigned tls_mhd_flags(void)
{
    return MHD_USE_TLS;
}

void tls_mhd_options(struct tls_listener *t, gnutls_certificate_retrieve_function2 *cert_callback,
                     struct MHD_OptionItem *opts, int *n)
{
    opts[(*n)++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)cert_callback};
    opts[(*n)++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, t->priorities};
}

void tls_conn_describe(struct MHD_Connection *conn, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session) {
        sys_strcpy(buf, len, "none"); /* for every plain-HTTP file response */
        return;
    }
    gnutls_session_t s = ci->tls_session;
    const char *v = gnutls_protocol_get_name(gnutls_protocol_get_version(s));
    const char *cs = gnutls_ciphersuite_get(s);
    snprintf(buf, len, "%s; %s", v ? v : "unknown", cs ? cs : "unknown");
}

json_t *tls_listener_json(struct tls_listener *t)
{
    char na[32] = "", la[32] = "";
    struct tm tm;
    pthread_mutex_lock(&t->mu);
    json_t *versions = json_array();
    for (unsigned i = 0; i < t->n_versions; i++)
        json_array_append_new(versions, json_string(t->versions[i]));
    time_t not_after = t->cur->not_after, loaded = t->loaded_at;
    if (not_after > 0 && gmtime_r(&not_after, &tm))
        strftime(na, sizeof na, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gmtime_r(&loaded, &tm))
        strftime(la, sizeof la, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s, s:o, s:i, s:s}", "cert", t->cert_path, "subject",
                          t->cur->subject, "not_after", na, "chain", (json_int_t)t->cur->n_pcert, "priorities",
                          t->priorities, "versions", versions, "reloads", (int)t->reloads, "loaded_at", la);
    pthread_mutex_unlock(&t->mu);
    return o;
}
