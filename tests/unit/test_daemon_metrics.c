/*
 * tests/unit/test_daemon_metrics.c: getstats' JSON as Prometheus text
 * (daemon/ctl/metrics_text.c): names, types, units, label escaping, and no
 * leak or crash when memory runs out.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/program.h"
#include "tests/unit/testutil.h"

static json_t *sample_stats(void)
{
	json_error_t e;
	json_t *s = json_loads(
	    "{\"uptime\": 5,"
	    " \"messages\": {\"ping\": {\"recv_count\": 3, \"recv_bytes\": 96, \"sent_count\": 1,"
	    "                \"sent_bytes\": 32},"
	    "              \"*other*\": {\"recv_count\": 1, \"recv_bytes\": 24, \"sent_count\": 0,"
	    "                \"sent_bytes\": 0}},"
	    " \"decode_errors\": {\"short\": 2},"
	    " \"freelists\": {\"script\": {\"buf_size\": 512, \"capacity\": 10, \"in_use\": 1,"
	    "                \"free\": 2, \"high_water\": 3, \"hits\": 4, \"misses\": 5,"
	    "                \"bypass\": 6, \"dropped\": 7}},"
	    " \"checkqueue\": {\"threads\": 2, \"workers\": 1, \"rounds\": 9, \"rounds_failed\": 0,"
	    "                \"jobs\": 8, \"jobs_run\": 8, \"busy_ms\": 1500, \"idle_ms\": 500,"
	    "                \"per_thread\": [{\"thread\": \"validation\", \"jobs\": 5,"
	    "                  \"batches\": 2, \"busy_ms\": 1000, \"idle_ms\": 250},"
	    "                 {\"thread\": \"worker\", \"jobs\": 3, \"batches\": 1,"
	    "                  \"busy_ms\": 500, \"idle_ms\": 250}]},"
	    " \"peers\": {\"inbound\": 2, \"outbound\": 8, \"maxconnections\": 125,"
	    "           \"disconnects\": 4},"
	    " \"process\": {\"uptime\": 5, \"alloc_count\": 77, \"bytes_recv\": 1000},"
	    " \"sync\": {\"stall_timeout_ms\": 2000, \"initialblockdownload\": true,"
	    "          \"presync\": {\"peers\": 1, \"started\": 2}},"
	    " \"control\": {\"idle_timeout_s\": 60, \"note\": \"a string is skipped\"},"
	    " \"chain\": {\"height\": 7, \"connect_ms\": 250},"
	    " \"mempool\": {\"size\": 3, \"mempoolminfee\": 1000, \"accepted\": 9,"
	    "            \"script_cache\": {\"hits\": 4, \"entries\": 2}}}",
	    0, &e);
	assert_non_null(s);
	return s;
}

static void assert_has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing \"%s\" in:\n%s", line, text);
}

static void assert_lacks(const char *text, const char *what)
{
	if (strstr(text, what))
		fail_msg("unexpected \"%s\" in:\n%s", what, text);
}

static void test_metrics_render_names_types_units(void **state)
{
	(void)state;
	json_t *s = sample_stats();
	size_t len = 0;
	char *t = metrics_render(s, &len);
	assert_non_null(t);
	assert_int_equal(strlen(t), len);
	assert_has(t, "# TYPE peerd_peers gauge\n");
	assert_has(t, "peerd_peers{direction=\"inbound\"} 2\n");
	assert_has(t, "peerd_peers{direction=\"outbound\"} 8\n");
	assert_has(t, "# TYPE peerd_messages_received_total counter\n");
	assert_has(t, "peerd_messages_received_total{command=\"ping\"} 3\n");
	assert_has(t, "peerd_message_sent_bytes_total{command=\"ping\"} 32\n");
	assert_has(t, "peerd_messages_received_total{command=\"*other*\"} 1\n");
	assert_has(t, "peerd_decode_errors_total{error=\"short\"} 2\n");
	assert_has(t, "peerd_freelist_in_use{list=\"script\"} 1\n");
	assert_has(t, "peerd_freelist_misses_total{list=\"script\"} 5\n");
	assert_has(
	    t, "peerd_checkqueue_thread_busy_seconds_total{thread=\"0\",role=\"validation\"} 1\n");
	assert_has(
	    t, "peerd_checkqueue_thread_idle_seconds_total{thread=\"1\",role=\"worker\"} 0.25\n");
	assert_has(t, "peerd_checkqueue_rounds_total 9\n");
	/* Generic sections: gauges as listed, counters with _total, units converted. */
	assert_has(t, "# TYPE peerd_peers_maxconnections gauge\npeerd_peers_maxconnections 125\n");
	assert_has(
	    t, "# TYPE peerd_peers_disconnects_total counter\npeerd_peers_disconnects_total 4\n");
	assert_has(t, "peerd_process_uptime_seconds 5\n");
	assert_has(t, "peerd_process_allocations 77\n");
	assert_has(t, "peerd_process_bytes_recv_total 1000\n");
	assert_has(t, "peerd_sync_stall_timeout_seconds 2\n");
	assert_has(t, "peerd_sync_initialblockdownload 1\n");
	assert_has(t, "peerd_sync_presync_peers 1\n");
	assert_has(t, "peerd_sync_presync_started_total 2\n");
	assert_has(t, "peerd_control_idle_timeout_seconds 60\n");
	assert_has(t, "peerd_chain_height 7\n");
	assert_has(t, "peerd_chain_connect_seconds_total 0.25\n");
	assert_has(t, "peerd_mempool_transactions 3\n");
	assert_has(t, "peerd_mempool_min_fee_sat_per_kvb 1000\n");
	assert_has(t, "peerd_mempool_accepted_total 9\n");
	assert_has(t, "peerd_mempool_script_cache_hits_total 4\n");
	assert_has(t, "peerd_mempool_script_cache_entries 2\n");
	/* Inbound and outbound are the labelled family only; the rest never leaks. */
	assert_lacks(t, "peerd_peers_inbound ");
	assert_lacks(t, "note");
	assert_lacks(t, "peerd_sync_stall_timeout_ms");
	assert_lacks(t, "peerd_chain_connect_ms");
	assert_lacks(t, "alloc_count ");
	/* Every family has HELP right before TYPE. */
	for (const char *p = strstr(t, "# TYPE "); p; p = strstr(p + 1, "# TYPE ")) {
		char name[160];
		assert_int_equal(sscanf(p, "# TYPE %159s", name), 1);
		char help[200];
		snprintf(help, sizeof(help), "# HELP %s ", name);
		assert_non_null(strstr(t, help));
	}
	xfree(t);
	json_decref(s);
}

static void test_metrics_render_escapes_labels(void **state)
{
	(void)state;
	json_t *s = json_pack("{s:{s:{s:i}}}", "messages", "a\"b\\c\nd", "recv_count", 1);
	size_t len;
	char *t = metrics_render(s, &len);
	assert_non_null(t);
	assert_has(t, "peerd_messages_received_total{command=\"a\\\"b\\\\c\\nd\"} 1\n");
	xfree(t);
	json_decref(s);
}

static void test_metrics_render_oom(void **state)
{
	(void)state;
	json_t *s = sample_stats();
	size_t len;
	for (long n = 0; n < 8; n++) {
		base_alloc_fail_after(n);
		char *t = metrics_render(s, &len);
		bool injected = base_alloc_injected();
		base_alloc_fail_after(-1);
		if (injected)
			assert_null(t);
		xfree(t);
	}
	json_decref(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metrics_render_names_types_units),
	    cmocka_unit_test(test_metrics_render_escapes_labels),
	    cmocka_unit_test(test_metrics_render_oom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
