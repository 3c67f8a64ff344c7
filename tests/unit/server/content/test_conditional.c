/* Unit tests for server/content/conditional.c: HTTP-dates in their three formats, and the
 * precondition evaluation (RFC 9110 13.2.2) by table: entity-tag lists, weak and strong
 * comparison, "*", dates, invalid dates ignored, and which header wins over which. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "conditional.h"

#define BAD ((long long)-0x7fffffff) /* a row whose date must be refused */

static void test_parse_date(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        long long t; /* BAD: cond_parse_date must return -1 */
    } rows[] = {
        /* the RFC's own example in each format */
        {"Sun, 06 Nov 1994 08:49:37 GMT", 784111777},
        {"Sun Nov  6 08:49:37 1994", 784111777},
        {"Sun Nov 06 08:49:37 1994", 784111777}, /* asctime's day may be two digits */
        {"  Sun, 06 Nov 1994 08:49:37 GMT \t", 784111777},
        {"Thu, 01 Jan 1970 00:00:00 GMT", 0},
        {"Wed, 31 Dec 1969 23:59:59 GMT", -1},
        {"Tue, 29 Feb 2028 12:00:00 GMT", 1835438400}, /* leap year */
        {"Tue, 29 Feb 2000 00:00:00 GMT", 951782400},  /* divisible by 400: leap */
        {"Thu, 31 Dec 2099 23:59:60 GMT", 4102444800}, /* a leap second: the next second */
        {"Fri, 31 Dec 9999 23:59:59 GMT", 253402300799},
        {"Mon, 30 Nov 2026 03:14:29 GMT", 1796008469},
        {"Mon Nov 30 03:14:29 2026", 1796008469},
        /* the weekday is not checked against the date (nginx does not either) */
        {"Fri, 06 Nov 1994 08:49:37 GMT", 784111777},
        /* not one HTTP-date */
        {NULL, BAD},
        {"", BAD},
        {"   ", BAD},
        {"garbage", BAD},
        {"784111777", BAD},
        {"1994-11-06T08:49:37Z", BAD},
        {"Sun, 06 Nov 1994 08:49:37 UTC", BAD},
        {"Sun, 06 Nov 1994 08:49:37 gmt", BAD},  /* case-sensitive */
        {"sun, 06 Nov 1994 08:49:37 GMT", BAD},
        {"Sun, 06 nov 1994 08:49:37 GMT", BAD},
        {"Sun, 06 Nov 1994 08:49:37", BAD},
        {"Sun, 06 Nov 1994 08:49:37 GMTx", BAD},
        {"Sun, 06 Nov 1994 08:49:37 GMT, Mon, 07 Nov 1994 08:49:37 GMT", BAD}, /* two members */
        {"Sun, 6 Nov 1994 08:49:37 GMT", BAD},   /* IMF-fixdate: two-digit day */
        {"Sun, 06 Nov 94 08:49:37 GMT", BAD},    /* IMF-fixdate: four-digit year */
        {"Sun,06 Nov 1994 08:49:37 GMT", BAD},
        {"Sun, 06  Nov 1994 08:49:37 GMT", BAD},
        {"Sun, 06 Foo 1994 08:49:37 GMT", BAD},
        {"Sun, 00 Nov 1994 08:49:37 GMT", BAD},
        {"Sun, 31 Nov 1994 08:49:37 GMT", BAD},  /* November has 30 days */
        {"Sat, 29 Feb 2027 08:49:37 GMT", BAD},  /* not a leap year */
        {"Mon, 29 Feb 2100 00:00:00 GMT", BAD},  /* divisible by 100: not a leap year */
        {"Sun, 06 Nov 1994 24:00:00 GMT", BAD},
        {"Sun, 06 Nov 1994 08:60:00 GMT", BAD},
        {"Sun, 06 Nov 1994 08:49:61 GMT", BAD},
        {"Sun, 06 Nov 1994 8:49:37 GMT", BAD},
        {"Sunday, 06 Nov 1994 08:49:37 GMT", BAD}, /* a long name with IMF-fixdate */
        {"Sun, 06-Nov-94 08:49:37 GMT", BAD},      /* a short name with RFC 850 */
        {"Sunday, 06-Nov-1994 08:49:37 GMT", BAD}, /* RFC 850: two-digit year */
        {"Sunday, 06-Nov-94 08:49:37", BAD},
        {"Sun Nov 6 08:49:37 1994", BAD},          /* asctime: the day is padded */
        {"Sun Nov  6 08:49:37 94", BAD},
        {"Sun Nov  6 08:49:37 1994 GMT", BAD},
        {"Sun  Nov  6 08:49:37 1994", BAD},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        time_t t = 12345;
        int rc = cond_parse_date(rows[i].s, &t);
        if (rows[i].t == BAD) {
            if (rc != -1 || t != 12345)
                fail_msg("\"%s\": accepted (%lld), want refused", rows[i].s ? rows[i].s : "(null)", (long long)t);
        } else if (rc != 0 || (long long)t != rows[i].t) {
            fail_msg("\"%s\": rc %d, %lld, want %lld", rows[i].s, rc, (long long)t, rows[i].t);
        }
    }
}

/* RFC 850's two-digit year: a year more than 50 years in the future is the most recent
 * past one with those digits (RFC 9110 5.6.7); relative to today, so computed here. */
static void test_rfc850_year(void **state)
{
    (void)state;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    int cur = tm.tm_year + 1900;
    const int ahead[] = {0, 1, 49, 50, 51, 99, -1, -49, -50};
    for (size_t i = 0; i < sizeof ahead / sizeof ahead[0]; i++) {
        int year = cur + ahead[i], want = ahead[i] > 50 ? year - 100 : ahead[i] < -49 ? year + 100 : year;
        char s[64];
        snprintf(s, sizeof s, "Monday, 01-Jan-%02d 00:00:00 GMT", year % 100);
        struct tm w = {.tm_year = want - 1900, .tm_mon = 0, .tm_mday = 1};
        time_t t = 0, expect = timegm(&w);
        if (cond_parse_date(s, &t) != 0 || t != expect)
            fail_msg("\"%s\" in %d: got %lld, want 1 Jan %d", s, cur, (long long)t, want);
    }
    time_t a, b;
    assert_int_equal(cond_parse_date("Sunday, 06-Nov-94 08:49:37 GMT", &a), 0);
    struct tm w = {.tm_year = (cur - 1994 >= 50 ? 2094 : 1994) - 1900, .tm_mon = 10, .tm_mday = 6,
                   .tm_hour = 8, .tm_min = 49, .tm_sec = 37};
    b = timegm(&w);
    assert_int_equal((long long)a, (long long)b);
}

#define LM "Mon, 30 Nov 2026 03:14:29 GMT"
#define LM_850 "Monday, 30-Nov-26 03:14:29 GMT"
#define LM_ASC "Mon Nov 30 03:14:29 2026"
#define EARLIER "Mon, 30 Nov 2026 03:14:28 GMT"
#define EARLIER_850 "Monday, 30-Nov-26 03:14:28 GMT"
#define EARLIER_ASC "Mon Nov 30 03:14:28 2026"
#define LATER "Tue, 01 Dec 2026 00:00:00 GMT"
#define LATER_ASC "Tue Dec  1 00:00:00 2026"
#define TAG "\"1-0-400\""

static const char *result_name(enum cond_result r)
{
    static const char *const n[] = {"PASS", "304", "412"};
    return n[r];
}

static void test_evaluate(void **state)
{
    (void)state;
    static const struct {
        const char *im, *inm, *ims, *ius; /* If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since */
        enum cond_result want;
    } rows[] = {
        {NULL, NULL, NULL, NULL, COND_PASS},
        /* If-Match: strong comparison */
        {TAG, NULL, NULL, NULL, COND_PASS},
        {"*", NULL, NULL, NULL, COND_PASS}, /* the file exists */
        {" * ", NULL, NULL, NULL, COND_PASS},
        {"\"a\", " TAG, NULL, NULL, NULL, COND_PASS},
        {"\"a\"," TAG ",\"b\"", NULL, NULL, NULL, COND_PASS},
        {" ,, " TAG " ,", NULL, NULL, NULL, COND_PASS}, /* empty list members */
        {"\t" TAG "\t", NULL, NULL, NULL, COND_PASS},
        {"garbage, " TAG, NULL, NULL, NULL, COND_PASS}, /* a malformed member is skipped */
        {"W/" TAG, NULL, NULL, NULL, COND_PRECONDITION_FAILED}, /* weak: never a strong match */
        {"\"a\", W/" TAG, NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"\"1-0-401\"", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"\"1-0-40\"", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"\"1-0-4000\"", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"1-0-400", NULL, NULL, NULL, COND_PRECONDITION_FAILED}, /* not quoted */
        {"\"1-0-400", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {TAG "x", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"\"1-0 400\"", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
        {"*, \"a\"", NULL, NULL, NULL, COND_PRECONDITION_FAILED}, /* "*" only alone */
        {"", NULL, NULL, NULL, COND_PRECONDITION_FAILED},         /* an empty list matches nothing */
        /* If-None-Match: weak comparison */
        {NULL, TAG, NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "W/" TAG, NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "*", NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "\"a\", W/" TAG, NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "\"a\"," TAG, NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "\t" TAG "\t", NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "bad, " TAG, NULL, NULL, COND_NOT_MODIFIED},
        {NULL, "\"a\", \"b\"", NULL, NULL, COND_PASS},
        {NULL, "\"1-0-401\"", NULL, NULL, COND_PASS},
        {NULL, "", NULL, NULL, COND_PASS},
        {NULL, "W/ " TAG, NULL, NULL, COND_PASS}, /* malformed */
        {NULL, "w/" TAG, NULL, NULL, COND_PASS},  /* "W/" is case-sensitive */
        {NULL, "1-0-400", NULL, NULL, COND_PASS},
        {NULL, "*, " TAG, NULL, NULL, COND_NOT_MODIFIED}, /* the "*" member is skipped, the tag matches */
        /* If-Modified-Since, in the three formats */
        {NULL, NULL, LM, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, LM_850, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, LM_ASC, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, LATER, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, LATER_ASC, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, EARLIER, NULL, COND_PASS},
        {NULL, NULL, EARLIER_850, NULL, COND_PASS},
        {NULL, NULL, EARLIER_ASC, NULL, COND_PASS},
        {NULL, NULL, "garbage", NULL, COND_PASS}, /* invalid: ignored */
        {NULL, NULL, "", NULL, COND_PASS},
        {NULL, NULL, LM ", " LATER, NULL, COND_PASS}, /* two members: invalid */
        {NULL, NULL, "Mon, 31 Nov 2026 03:14:29 GMT", NULL, COND_PASS},
        /* If-Unmodified-Since */
        {NULL, NULL, NULL, LM, COND_PASS},
        {NULL, NULL, NULL, LM_ASC, COND_PASS},
        {NULL, NULL, NULL, LATER, COND_PASS},
        {NULL, NULL, NULL, EARLIER, COND_PRECONDITION_FAILED},
        {NULL, NULL, NULL, EARLIER_850, COND_PRECONDITION_FAILED},
        {NULL, NULL, NULL, EARLIER_ASC, COND_PRECONDITION_FAILED},
        {NULL, NULL, NULL, "garbage", COND_PASS},
        {NULL, NULL, NULL, EARLIER " x", COND_PASS},
        /* precedence: If-Match over If-Unmodified-Since */
        {TAG, NULL, NULL, EARLIER, COND_PASS},
        {"*", NULL, NULL, EARLIER, COND_PASS},
        {"\"a\"", NULL, NULL, LATER, COND_PRECONDITION_FAILED},
        /* If-None-Match over If-Modified-Since */
        {NULL, "\"a\"", LATER, NULL, COND_PASS},
        {NULL, "\"a\"", LM, NULL, COND_PASS},
        {NULL, TAG, EARLIER, NULL, COND_NOT_MODIFIED},
        {NULL, "", LATER, NULL, COND_PASS},
        /* the 412 checks before the 304 ones */
        {"\"a\"", TAG, NULL, NULL, COND_PRECONDITION_FAILED},
        {"\"a\"", NULL, LATER, NULL, COND_PRECONDITION_FAILED},
        {NULL, TAG, NULL, EARLIER, COND_PRECONDITION_FAILED},
        {NULL, NULL, LATER, EARLIER, COND_PRECONDITION_FAILED},
        {TAG, TAG, NULL, NULL, COND_NOT_MODIFIED},
        {"*", "*", NULL, NULL, COND_NOT_MODIFIED},
        {NULL, NULL, LATER, LATER, COND_NOT_MODIFIED},
        {TAG, "\"a\"", LATER, EARLIER, COND_PASS},
        {"garbage", NULL, NULL, NULL, COND_PRECONDITION_FAILED},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cond_headers h = {rows[i].im, rows[i].inm, rows[i].ims, rows[i].ius};
        enum cond_result r = cond_evaluate(&h, TAG, LM);
        if (r != rows[i].want)
            fail_msg("row %zu: If-Match %s, If-None-Match %s, If-Modified-Since %s, If-Unmodified-Since %s: "
                     "got %s, want %s",
                     i, rows[i].im ? rows[i].im : "-", rows[i].inm ? rows[i].inm : "-",
                     rows[i].ims ? rows[i].ims : "-", rows[i].ius ? rows[i].ius : "-", result_name(r),
                     result_name(rows[i].want));
    }
}

/* A Last-Modified that cannot be read leaves the date preconditions out, never the tags. */
static void test_no_last_modified(void **state)
{
    (void)state;
    const char *lms[] = {NULL, "", "yesterday"};
    for (size_t i = 0; i < sizeof lms / sizeof lms[0]; i++) {
        struct cond_headers ims = {.if_modified_since = LATER}, ius = {.if_unmodified_since = EARLIER},
                            inm = {.if_none_match = TAG}, im = {.if_match = "\"a\""};
        assert_int_equal(cond_evaluate(&ims, TAG, lms[i]), COND_PASS);
        assert_int_equal(cond_evaluate(&ius, TAG, lms[i]), COND_PASS);
        assert_int_equal(cond_evaluate(&inm, TAG, lms[i]), COND_NOT_MODIFIED);
        assert_int_equal(cond_evaluate(&im, TAG, lms[i]), COND_PRECONDITION_FAILED);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_date),
        cmocka_unit_test(test_rfc850_year),
        cmocka_unit_test(test_evaluate),
        cmocka_unit_test(test_no_last_modified),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
