/* Unit tests for client/measure/urlkind.c: which URLs are speed-test endpoints, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "urlkind.h"

static void test_kind(void **state)
{
    (void)state;
    static const struct {
        const char *url;
        enum url_kind k;
    } rows[] = {
        {"http://h/garbage.php?ckSize=100", URL_KIND_LIBRESPEED},
        {"http://h:8080/backend/garbage.php?r=1&ckSize=4", URL_KIND_LIBRESPEED},
        {"https://h/speedtest/garbage", URL_KIND_LIBRESPEED},
        {"http://h/backend/empty.php?cors", URL_KIND_LIBRESPEED},
        {"http://[::1]:18931/__down?bytes=100000", URL_KIND_CLOUDFLARE},
        {"https://speed.example/__up#x", URL_KIND_CLOUDFLARE},
        {"ws://h:8080/ndt/v7/download", URL_KIND_NDT7},
        {"WSS://h/ndt/v7/upload", URL_KIND_NDT7},
        {"wss://h/__down?bytes=1", URL_KIND_NDT7}, /* the scheme first */
        {"http://h/__down/", URL_KIND_FILE},
        {"http://h/files/garbage.php.dat", URL_KIND_FILE},
        {"http://h/ram/1GiB.dat?x=/__down", URL_KIND_FILE}, /* the query is not the path */
        {"http://garbage.php/", URL_KIND_FILE},              /* nor is the host */
        {"http://h", URL_KIND_FILE},
        {"not a url", URL_KIND_FILE},
        {NULL, URL_KIND_FILE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (urlkind_of(rows[i].url) != rows[i].k)
            fail_msg("%s: %s, want %s", rows[i].url ? rows[i].url : "(null)", urlkind_name(urlkind_of(rows[i].url)),
                     urlkind_name(rows[i].k));
    assert_string_equal(urlkind_name(URL_KIND_FILE), "file");
    assert_string_equal(urlkind_name(URL_KIND_NDT7), "ndt7");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kind)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
