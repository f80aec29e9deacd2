/*
 * tests/fuzz/fuzz_ctl_json.c: daemon/ctl/json_load.c, the request text read
 * as Core's UniValue reads it, against arbitrary bytes.
 *
 * Properties: nothing crashes or leaks; a text jansson parses by itself is
 * parsed to the same tree unless it repeats a key (json_load's scan
 * changes only what jansson refuses, and a request's repeated params, id
 * or method, where Core takes the first); a note names a member of the text (a batch's place or 0);
 * and an id written back into a reply (ctl_json_set_id) leaves a text that still ends as it did.
 * The seeds are requests with huge numbers and repeated keys.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "daemon/ctl/internal.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "fuzz_ctl_json: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;
	const char *text = (const char *)data;
	json_error_t e1, e2;
	struct ctl_json_notes notes;
	json_t *plain = json_loadb(text, size, JSON_DECODE_ANY, &e1);
	json_t *v = ctl_json_load(text, size, &e2, &notes);
	if (plain) {
		check(v != NULL, "jansson parses it, ctl_json_load does not");
		/* Only a repeated key may change it (a request's second params,
		 * id or method is renamed out of the way: Core takes the first). */
		if (!json_equal(plain, v)) {
			json_error_t e3;
			json_t *strict =
			    json_loadb(text, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e3);
			check(strict == NULL, "a text jansson parses came out as another tree");
		}
	}
	if (!v)
		check(notes.n == 0, "notes without a tree");
	size_t members = json_is_array(v) ? json_array_size(v) : 1;
	for (size_t i = 0; i < notes.n; i++) {
		check(notes.v[i].member < members || members == 0, "a note past the members");
		check(notes.v[i].id_text || notes.v[i].dup_key, "an empty note");
		if (notes.v[i].id_text) {
			const char *reply = "{\"jsonrpc\":\"2.0\",\"result\":0,\"id\":1e+29}";
			size_t n = strlen(reply);
			char *t = xmalloc(n + 1);
			check(t != NULL, "out of memory");
			memcpy(t, reply, n + 1);
			if (ctl_json_set_id(&t, &n, notes.v[i].id_text)) {
				check(strlen(t) == n, "set_id's length");
				check(t[n - 1] == '}', "set_id's end");
				check(strstr(t, notes.v[i].id_text) != NULL, "set_id lost the id");
			}
			xfree(t);
		}
	}
	ctl_json_notes_release(&notes);
	json_decref(plain);
	json_decref(v);
	return 0;
}
