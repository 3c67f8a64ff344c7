/* Unit tests for server/observe/telemetry.c: the ring's bounds (count and bytes) and owner
 * check, and LibreSpeed's formatting (json.php's format() and ISP cut) and redaction
 * (telemetry.php's), table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "telemetry.h"

static struct peer peer_of(const char *ip)
{
    struct peer p;
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    assert_int_equal(peer_from_sockaddr((struct sockaddr *)&sa, &p), 0);
    return p;
}

static void test_ring(void **state)
{
    (void)state;
    struct telemetry *t = telemetry_new(3, 4096);
    assert_non_null(t);
    struct peer a = peer_of("192.0.2.1"), b = peer_of("192.0.2.2");
    struct telemetry_report rep = {.ip = "192.0.2.1", .dl = "94.2", .ua = "UA"};
    assert_int_equal(telemetry_add(t, &rep, &a, 0, 0), 1);
    assert_int_equal(telemetry_add(t, &rep, &a, 86400.5, 0), 2);
    json_t *j = telemetry_get(t, 2, &a);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "timestamp")), "1970-01-02 00:00:00");
    assert_string_equal(json_string_value(json_object_get(j, "dl")), "94.2");
    assert_string_equal(json_string_value(json_object_get(j, "log")), ""); /* absent: "" */
    assert_int_equal(json_integer_value(json_object_get(j, "id")), 2);
    json_decref(j);
    assert_null(telemetry_get(t, 2, &b)); /* another address */
    assert_null(telemetry_get(t, 9, NULL));
    assert_null(telemetry_get(t, 0, NULL));
    j = telemetry_get(t, 1, NULL); /* any reader */
    assert_non_null(j);
    json_decref(j);
    assert_int_equal(telemetry_add(t, &rep, NULL, 0, 0), 3);
    assert_null(telemetry_get(t, 3, &a)); /* no owner: "any" readers only */
    assert_int_equal(telemetry_add(t, &rep, &a, 0, 0), 4); /* 3 kept: 1 dropped */
    assert_null(telemetry_get(t, 1, NULL));
    /* the byte budget: a 3000-byte log leaves room for nothing else of that size */
    char *big = malloc(3001);
    memset(big, 'x', 3000);
    big[3000] = 0;
    struct telemetry_report large = {.log = big};
    assert_int_equal(telemetry_add(t, &large, &a, 0, 0), 5);
    assert_int_equal(telemetry_add(t, &large, &a, 0, 0), 6); /* 5 dropped to make room */
    assert_null(telemetry_get(t, 5, NULL));
    assert_null(telemetry_get(t, 4, NULL)); /* 4 too: the oldest go first */
    j = telemetry_get(t, 6, NULL);
    assert_int_equal(strlen(json_string_value(json_object_get(j, "log"))), 3000);
    json_decref(j);
    big = realloc(big, 5001);
    memset(big, 'x', 5000);
    big[5000] = 0;
    large.log = big;
    assert_int_equal(telemetry_add(t, &large, &a, 0, 0), 0); /* alone larger than the ring */
    free(big);
    /* redacted: the address and the log's and ispinfo's addresses */
    struct telemetry_report r = {.ip = "192.0.2.1", .ispinfo = "{\"processedString\":\"192.0.2.1 - X\"}",
                                 .log = "to 2001:db8::1 ok", .extra = "192.0.2.9"};
    uint64_t id = telemetry_add(t, &r, &a, 0, 1);
    j = telemetry_get(t, id, &a);
    assert_string_equal(json_string_value(json_object_get(j, "ip")), "0.0.0.0");
    assert_string_equal(json_string_value(json_object_get(j, "ispinfo")), "{\"processedString\":\"0.0.0.0 - X\"}");
    assert_string_equal(json_string_value(json_object_get(j, "log")), "to 0.0.0.0 ok");
    assert_string_equal(json_string_value(json_object_get(j, "extra")), "192.0.2.9"); /* the PHP keeps extra */
    json_t *pub = telemetry_public_json(j);
    char *text = json_dumps(pub, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text, "{\"timestamp\":\"1970-01-01 00:00:00\",\"download\":\"0.00\",\"upload\":\"0.00\","
                              "\"ping\":\"0.00\",\"jitter\":\"0.00\",\"ispinfo\":\"X\"}");
    free(text);
    json_decref(pub);
    json_decref(j);
    telemetry_free(t);
    telemetry_free(NULL);
}

static void test_format(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"94.237", "94.2"}, {"8.5", "8.50"}, {"0", "0.00"}, {"250", "250"}, {"99.96", "100.0"},
        {"1000.4", "1000"}, {"", "0.00"}, {"abc", "0.00"}, {"12abc", "12.0"}, {NULL, "0.00"},
        {"-3", "-3.00"}, {"1e3", "1000"}, {"inf", "0.00"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(telemetry_format(rows[i].in, buf, sizeof buf), rows[i].out) != 0)
            fail_msg("\"%s\": \"%s\", want \"%s\"", rows[i].in ? rows[i].in : "(null)", buf, rows[i].out);
}

static void test_isp(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"{\"processedString\":\"127.0.0.1 - localhost IPv4 access\",\"rawIspInfo\":\"\"}", "localhost IPv4 access"},
        {"{\"processedString\":\"192.0.2.1 - Example Net, FR (120 km)\"}", "Example Net, FR "},
        {"{\"processedString\":\"192.0.2.1\"}", ""},
        {"{\"processedString\":\"a-\"}", ""},
        {"not json", ""}, {NULL, ""}, {"{}", ""},
    };
    char buf[128];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(telemetry_isp(rows[i].in, buf, sizeof buf), rows[i].out) != 0)
            fail_msg("\"%s\": \"%s\", want \"%s\"", rows[i].in ? rows[i].in : "(null)", buf, rows[i].out);
}

static void test_redact(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } rows[] = {
        {"host 10.1.2.3, ::1 and fd00::7.", "host 0.0.0.0, 0.0.0.0 and 0.0.0.0."},
        {"::ffff:192.0.2.1 then 192.0.2.1:8080", "0.0.0.0 then 0.0.0.0:8080"},
        {"ping 12.5 ms, 1.2.3 is no address", "ping 12.5 ms, 1.2.3 is no address"},
        {"{\"hostname\":\"a.example \\\"x\\\"\",\"ip\":\"2001:db8::1\"}", "{\"hostname\":\"REDACTED\",\"ip\":\"0.0.0.0\"}"},
        {"\"hostname\":\"unterminated", "\"hostname\":\"unterminated"},
        {"", ""}, {"no address here", "no address here"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *out = telemetry_redact(rows[i].in);
        assert_non_null(out);
        if (strcmp(out, rows[i].out) != 0)
            fail_msg("\"%s\": \"%s\", want \"%s\"", rows[i].in, out, rows[i].out);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_isp),
        cmocka_unit_test(test_redact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
