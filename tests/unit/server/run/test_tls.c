/* Unit tests for server/run/tls.c: tls_check's verdicts (table: missing file, a key that does
 * not match, a certificate file that holds none, a bad or empty priority string) with the
 * setting at fault; a listener's /status facts (subject, not_after, versions); tls_reload
 * swapping the credentials for connections started after it while one started before keeps
 * its own until it closes, and a failed reload keeping the old ones; and the same through
 * real handshakes: a libmicrohttpd daemon wired as server.c wires it, libcurl clients that
 * trust only certificate a, then only b, before and after tls_reload. Certificates are
 * made here with GnuTLS (self-signed P-256), in a temporary folder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "conn.h"
#include "mhd_compat.h"
#include "testlib.h"
#include "testlib_tls.h"
#include "tls.h"

static char dir[64];
static char path_buf[8][128];

static const char *fix(int i, const char *name)
{
    snprintf(path_buf[i], sizeof path_buf[i], "%s/%s", dir, name);
    return path_buf[i];
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/debit-test-tls.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    testlib_tls_cert(dir, "a");
    testlib_tls_cert(dir, "b");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    static const char *const names[] = {"a.crt", "a.key", "b.crt", "b.key"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(fix(0, names[i]));
    rmdir(dir);
    return 0;
}

static void test_check(void **state)
{
    (void)state;
    static const struct {
        const char *cert, *key, *prio;
        int ok;
        enum tls_field field;
        const char *msg; /* a part of the reason */
    } rows[] = {
        {"a.crt", "a.key", NULL, 1, TLS_FIELD_PRIORITIES, ""},
        {"b.crt", "b.key", "NORMAL", 1, TLS_FIELD_PRIORITIES, ""},
        {"none.crt", "a.key", NULL, 0, TLS_FIELD_CERT, "none.crt\": No such file or directory"},
        {"a.crt", "none.key", NULL, 0, TLS_FIELD_KEY, "none.key\": No such file or directory"},
        {"a.crt", "b.key", NULL, 0, TLS_FIELD_KEY, "b.key\" does not match the certificate in"},
        {"a.key", "a.key", NULL, 0, TLS_FIELD_CERT, "holds no PEM certificate"},
        {"a.crt", "a.crt", NULL, 0, TLS_FIELD_KEY, "holds no unencrypted PEM private key"},
        {"a.crt", "a.key", "NORMAL:+NO-SUCH-THING", 0, TLS_FIELD_PRIORITIES, "(at \"+NO-SUCH-THING\")"},
        {"a.crt", "a.key", "NORMAL:-VERS-ALL", 0, TLS_FIELD_PRIORITIES, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char err[512] = "";
        enum tls_field f = TLS_FIELD_CERT;
        int r = tls_check(fix(0, rows[i].cert), fix(1, rows[i].key), rows[i].prio, &f, err, sizeof err);
        if ((r == 0) != rows[i].ok)
            fail_msg("row %zu: got %d (%s), want %s", i, r, err, rows[i].ok ? "ok" : "an error");
        if (!rows[i].ok && f != rows[i].field)
            fail_msg("row %zu: field %d, want %d (%s)", i, f, rows[i].field, err);
        if (!rows[i].ok && !strstr(err, rows[i].msg))
            fail_msg("row %zu: \"%s\" does not say \"%s\"", i, err, rows[i].msg);
    }
}

/* The subject of the leaf certificate a handshake with credentials C would be given. */
static void subject_of(const struct tls_creds *c, char *buf, size_t len)
{
    gnutls_pcert_st *pc;
    unsigned n;
    gnutls_privkey_t key;
    buf[0] = 0;
    if (tls_creds_cert(c, &pc, &n, &key) < 0)
        return;
    assert_int_equal(n, 1);
    assert_non_null(key);
    gnutls_x509_crt_t crt;
    assert_int_equal(gnutls_x509_crt_init(&crt), 0);
    assert_int_equal(gnutls_x509_crt_import(crt, &pc[0].cert, GNUTLS_X509_FMT_DER), 0);
    size_t sz = len;
    assert_int_equal(gnutls_x509_crt_get_dn(crt, buf, &sz), 0);
    gnutls_x509_crt_deinit(crt);
}

static void test_listener_and_reload(void **state)
{
    (void)state;
    char err[512], subj[128];
    struct tls_listener *t = tls_listener_new(fix(0, "a.crt"), fix(1, "a.key"), NULL, err, sizeof err);
    assert_non_null(t);
    json_t *j = tls_listener_json(t);
    assert_string_equal(json_string_value(json_object_get(j, "subject")), "CN=a");
    assert_string_equal(json_string_value(json_object_get(j, "priorities")), TLS_DEFAULT_PRIORITIES);
    char *v = json_dumps(json_object_get(j, "versions"), JSON_COMPACT);
    assert_string_equal(v, "[\"TLS1.3\",\"TLS1.2\"]");
    free(v);
    assert_int_equal(strlen(json_string_value(json_object_get(j, "not_after"))), 20); /* 2026-12-31T10:00:00Z */
    assert_int_equal(json_integer_value(json_object_get(j, "reloads")), 0);
    json_decref(j);

    /* what three connections take at NOTIFY_STARTED (kept in their struct conn) */
    subject_of(NULL, subj, sizeof subj);
    assert_string_equal(subj, ""); /* never started: no credentials */
    struct tls_creds *a = tls_creds_take(t);
    subject_of(a, subj, sizeof subj);
    assert_string_equal(subj, "CN=a");

    assert_int_equal(tls_reload(t, fix(0, "b.crt"), fix(1, "b.key"), err, sizeof err), 0);
    struct tls_creds *b = tls_creds_take(t);
    subject_of(b, subj, sizeof subj);
    assert_string_equal(subj, "CN=b"); /* a new connection: the new certificate */
    subject_of(a, subj, sizeof subj);
    assert_string_equal(subj, "CN=a"); /* the open one keeps its own (freed at its close) */
    tls_creds_release(a);

    /* a reload that fails keeps the current credentials */
    assert_int_equal(tls_reload(t, fix(0, "a.crt"), fix(1, "b.key"), err, sizeof err), -1);
    assert_non_null(strstr(err, "does not match"));
    struct tls_creds *c = tls_creds_take(t);
    subject_of(c, subj, sizeof subj);
    assert_string_equal(subj, "CN=b");
    j = tls_listener_json(t);
    assert_string_equal(json_string_value(json_object_get(j, "subject")), "CN=b");
    assert_int_equal(json_integer_value(json_object_get(j, "reloads")), 1);
    json_decref(j);

    /* the listener can go before its last connections (server_free after the daemons) */
    tls_creds_release(b);
    tls_listener_free(t);
    subject_of(c, subj, sizeof subj);
    assert_string_equal(subj, "CN=b");
    tls_creds_release(c);
    tls_creds_release(NULL); /* nothing */
}

static void test_new_fails(void **state)
{
    (void)state;
    char err[512];
    assert_null(tls_listener_new(fix(0, "a.crt"), fix(1, "b.key"), NULL, err, sizeof err));
    assert_non_null(strstr(err, "does not match"));
    assert_null(tls_listener_new(fix(0, "a.crt"), fix(1, "a.key"), "bogus", err, sizeof err));
    assert_non_null(strstr(err, "not a valid GnuTLS priority string"));
}

/* A daemon wired as http_connection wires an HTTPS listener (a struct conn holding the
 * credentials); each answer is tls_conn_describe. */
static void notify(void *cls, struct MHD_Connection *c, void **sc, enum MHD_ConnectionNotificationCode toe)
{
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct conn *cn = conn_new(MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd);
        assert_non_null(cn);
        cn->creds = tls_creds_take(cls);
        *sc = cn;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_free(*sc);
        *sc = NULL;
    }
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_size, void **req_cls)
{
    (void)cls, (void)url, (void)method, (void)version, (void)data, (void)data_size;
    static int seen;
    if (!*req_cls) {
        *req_cls = &seen;
        return MHD_YES;
    }
    char d[128];
    tls_conn_describe(c, d, sizeof d);
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(d), d, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result ret = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ret;
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    char *b = ud;
    size_t have = strlen(b), len = sz * n;
    if (have + len < 128) {
        memcpy(b + have, p, len);
        b[have + len] = 0;
    }
    return len;
}

/* GET / from the daemon on PORT on a fresh connection, trusting only CA: the curl code;
 * BODY gets the answer. */
static CURLcode get(unsigned port, const char *ca, char *body)
{
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/", port);
    body[0] = 0;
    CURL *h = curl_easy_init();
    assert_non_null(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CAINFO, ca);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L); /* the test certificates name no IP; the chain is checked */
    curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
    CURLcode rc = curl_easy_perform(h);
    curl_easy_cleanup(h);
    return rc;
}

static void test_handshakes_across_reload(void **state)
{
    (void)state;
    char err[512], body[128];
    struct tls_listener *t = tls_listener_new(fix(0, "a.crt"), fix(1, "a.key"), NULL, err, sizeof err);
    assert_non_null(t);
    unsigned port;
    int fd = testlib_listen(&port);
    struct MHD_OptionItem opts[4];
    int n = 0;
    tls_mhd_options(t, mhd_compat_tls_cert, opts, &n);
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | tls_mhd_flags(), 0, NULL, NULL, answer,
                                            NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_ARRAY, opts,
                                            MHD_OPTION_NOTIFY_CONNECTION, notify, t, MHD_OPTION_END);
    assert_non_null(d);
    char ca_a[128], ca_b[128];
    snprintf(ca_a, sizeof ca_a, "%s", fix(2, "a.crt"));
    snprintf(ca_b, sizeof ca_b, "%s", fix(3, "b.crt"));

    assert_int_equal(get(port, ca_a, body), CURLE_OK);
    assert_int_equal(strncmp(body, "TLS1.3; TLS_", 12), 0); /* X-Debit-Tls's value, from the session */
    assert_int_equal(get(port, ca_b, body), CURLE_PEER_FAILED_VERIFICATION);

    assert_int_equal(tls_reload(t, fix(0, "b.crt"), fix(1, "b.key"), err, sizeof err), 0);
    assert_int_equal(get(port, ca_b, body), CURLE_OK); /* a new handshake: the new certificate */
    assert_int_equal(get(port, ca_a, body), CURLE_PEER_FAILED_VERIFICATION);

    assert_int_equal(tls_reload(t, fix(0, "a.crt"), fix(1, "b.key"), err, sizeof err), -1); /* refused */
    assert_int_equal(get(port, ca_b, body), CURLE_OK);
    MHD_stop_daemon(d);
    tls_listener_free(t);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_listener_and_reload),
        cmocka_unit_test(test_new_fails),
        cmocka_unit_test(test_handshakes_across_reload),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
