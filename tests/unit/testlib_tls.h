/* testlib_tls: a throwaway certificate for the unit tests that run a TLS daemon (header
 * only, as testlib.h; include it after <cmocka.h>). */
#ifndef DEBIT_TESTLIB_TLS_H
#define DEBIT_TESTLIB_TLS_H

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <time.h>

static inline void testlib_tls_write(const char *path, const gnutls_datum_t *d)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(d->data, 1, d->size, f), d->size);
    assert_int_equal(fclose(f), 0);
}

/* DIR/NAME.crt and DIR/NAME.key: a self-signed certificate for CN=NAME, valid 30 days from now. */
static inline void testlib_tls_cert(const char *dir, const char *name)
{
    gnutls_x509_privkey_t key;
    gnutls_x509_crt_t crt;
    assert_int_equal(gnutls_x509_privkey_init(&key), 0);
    assert_int_equal(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
                                                  GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0), 0);
    assert_int_equal(gnutls_x509_crt_init(&crt), 0);
    char dn[64];
    snprintf(dn, sizeof dn, "CN=%s", name);
    unsigned char serial[] = {1, 2, 3};
    time_t now = time(NULL);
    assert_int_equal(gnutls_x509_crt_set_version(crt, 3), 0);
    assert_int_equal(gnutls_x509_crt_set_serial(crt, serial, sizeof serial), 0);
    assert_int_equal(gnutls_x509_crt_set_dn(crt, dn, NULL), 0);
    assert_int_equal(gnutls_x509_crt_set_issuer_dn(crt, dn, NULL), 0);
    assert_int_equal(gnutls_x509_crt_set_activation_time(crt, now - 60), 0);
    assert_int_equal(gnutls_x509_crt_set_expiration_time(crt, now + 30 * 86400), 0);
    assert_int_equal(gnutls_x509_crt_set_key(crt, key), 0);
    assert_int_equal(gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0), 0);
    gnutls_datum_t d;
    char p[128];
    assert_int_equal(gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &d), 0);
    snprintf(p, sizeof p, "%s/%s.crt", dir, name);
    testlib_tls_write(p, &d);
    gnutls_free(d.data);
    assert_int_equal(gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &d), 0);
    snprintf(p, sizeof p, "%s/%s.key", dir, name);
    testlib_tls_write(p, &d);
    gnutls_free(d.data);
    gnutls_x509_crt_deinit(crt);
    gnutls_x509_privkey_deinit(key);
}

#endif
