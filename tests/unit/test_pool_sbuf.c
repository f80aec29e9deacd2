/* tests/unit/test_pool_sbuf.c: pool/'s small-buffer script (struct pool_sbuf, Core's
 * prevector<28>): inline and heap storage, append, resize, copies, failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pool/pool.h"
#include "tests/unit/testutil.h"
#include "tests/unit/testutil_pool.h"

_Static_assert(sizeof(struct pool_sbuf) == 32, "sbuf is 32 bytes like prevector<28>");

/* ---------------------------------------------------------------------- */
/* pool_sbuf                                                               */

static void test_sbuf_inline_and_heap(void **state)
{
	(void)state;
	struct pool_sbuf sb;
	uint8_t bytes[100];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (uint8_t)i;

	pool_sbuf_init(&sb);
	assert_int_equal(pool_sbuf_len(&sb), 0);
	assert_false(pool_sbuf_on_heap(&sb));

	assert_int_equal(pool_sbuf_assign(&sb, bytes, 28), 0);
	assert_false(pool_sbuf_on_heap(&sb));
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), bytes, 28);

	assert_int_equal(pool_sbuf_assign(&sb, bytes, 29), 0);
	assert_true(pool_sbuf_on_heap(&sb));
	assert_int_equal(pool_sbuf_capacity(&sb), 29);
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), bytes, 29);

	/* Shrinking keeps the heap block; growing within it does not allocate. */
	assert_int_equal(pool_sbuf_assign(&sb, bytes, 3), 0);
	assert_true(pool_sbuf_on_heap(&sb));
	uint64_t a0 = base_alloc_count();
	assert_int_equal(pool_sbuf_assign(&sb, bytes, 29), 0);
	assert_int_equal(base_alloc_count(), a0);
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), bytes, 29);

	pool_sbuf_clear(&sb);
	assert_int_equal(pool_sbuf_len(&sb), 0);
	assert_true(pool_sbuf_on_heap(&sb));
	pool_sbuf_release(&sb);
	assert_false(pool_sbuf_on_heap(&sb));
	assert_int_equal(pool_sbuf_len(&sb), 0);

	/* All-zero bytes are a valid empty sbuf. */
	struct pool_sbuf z;
	memset(&z, 0, sizeof(z));
	assert_int_equal(pool_sbuf_len(&z), 0);
	pool_sbuf_release(&z);
}

static void test_sbuf_append_resize_copy(void **state)
{
	(void)state;
	struct pool_sbuf a, b;
	uint8_t ref[1000];
	pool_sbuf_init(&a);
	pool_sbuf_init(&b);
	for (size_t i = 0; i < sizeof(ref); i++) {
		ref[i] = (uint8_t)(i * 5 + 3);
		assert_int_equal(pool_sbuf_append(&a, &ref[i], 1), 0);
	}
	tu_assert_bytes_equal(pool_sbuf_data(&a), pool_sbuf_len(&a), ref, sizeof(ref));
	/* Geometric growth: far fewer than 1000 bytes of slack, far fewer allocations. */
	assert_true(pool_sbuf_capacity(&a) < 2 * sizeof(ref));

	assert_int_equal(pool_sbuf_copy(&b, &a), 0);
	tu_assert_bytes_equal(pool_sbuf_data(&b), pool_sbuf_len(&b), ref, sizeof(ref));
	assert_ptr_not_equal(pool_sbuf_data(&a), pool_sbuf_data(&b));
	pool_sbuf_wdata(&b)[0] ^= 0xff;
	assert_int_equal(pool_sbuf_data(&a)[0], ref[0]);

	assert_int_equal(pool_sbuf_resize(&b, 10), 0);
	assert_int_equal(pool_sbuf_resize(&b, 20), 0);
	for (size_t i = 10; i < 20; i++)
		assert_int_equal(pool_sbuf_data(&b)[i], 0);
	assert_int_equal(pool_sbuf_data(&b)[1], ref[1]);

	/* Inline resize and an inline-to-heap append keep the old bytes. */
	struct pool_sbuf c;
	pool_sbuf_init(&c);
	assert_int_equal(pool_sbuf_append(&c, ref, 20), 0);
	assert_int_equal(pool_sbuf_resize(&c, 25), 0);
	assert_false(pool_sbuf_on_heap(&c));
	assert_int_equal(pool_sbuf_append(&c, ref, 10), 0);
	assert_true(pool_sbuf_on_heap(&c));
	assert_int_equal(pool_sbuf_len(&c), 35);
	tu_assert_bytes_equal(pool_sbuf_data(&c), 20, ref, 20);
	tu_assert_bytes_equal(pool_sbuf_data(&c) + 25, 10, ref, 10);

	pool_sbuf_release(&a);
	pool_sbuf_release(&b);
	pool_sbuf_release(&c);
}

/* The point of the design: an sbuf is still right after a memcpy. */
static void test_sbuf_valid_after_memcpy(void **state)
{
	(void)state;
	uint8_t ref[40];
	for (size_t i = 0; i < sizeof(ref); i++)
		ref[i] = (uint8_t)(0xa0 + i);
	struct pool_sbuf *arr = xmalloc(2 * sizeof(*arr));
	assert_non_null(arr);
	pool_sbuf_init(&arr[0]);
	pool_sbuf_init(&arr[1]);
	assert_int_equal(pool_sbuf_assign(&arr[0], ref, 20), 0);
	assert_int_equal(pool_sbuf_assign(&arr[1], ref, 40), 0);
	for (int round = 0; round < 20; round++) {
		/* Realloc to sizes that force the block to move now and then. */
		arr = xrealloc(arr, (size_t)(round % 2 ? 2 : 4096) * sizeof(*arr));
		assert_non_null(arr);
		struct pool_sbuf moved;
		memcpy(&moved, &arr[round % 2], sizeof(moved));
		tu_assert_bytes_equal(pool_sbuf_data(&moved), pool_sbuf_len(&moved), ref,
		                      round % 2 ? 40 : 20);
		tu_assert_bytes_equal(pool_sbuf_data(&arr[0]), pool_sbuf_len(&arr[0]), ref, 20);
		tu_assert_bytes_equal(pool_sbuf_data(&arr[1]), pool_sbuf_len(&arr[1]), ref, 40);
	}
	pool_sbuf_release(&arr[0]);
	pool_sbuf_release(&arr[1]);
	xfree(arr);
}

static void test_sbuf_failure_and_overflow(void **state)
{
	(void)state;
	uint8_t ref[64];
	memset(ref, 0x5a, sizeof(ref));
	struct pool_sbuf sb;
	pool_sbuf_init(&sb);
	assert_int_equal(pool_sbuf_assign(&sb, ref, 10), 0);

	base_alloc_fail_after(0);
	assert_int_equal(pool_sbuf_assign(&sb, ref, 64), POOL_ENOMEM);
	assert_true(base_alloc_injected());
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), ref, 10);

	base_alloc_fail_after(0);
	assert_int_equal(pool_sbuf_append(&sb, ref, 40), POOL_ENOMEM);
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), ref, 10);

	base_alloc_fail_after(0);
	assert_int_equal(pool_sbuf_resize(&sb, 100), POOL_ENOMEM);
	assert_int_equal(pool_sbuf_len(&sb), 10);

	assert_int_equal(pool_sbuf_assign(&sb, ref, 64), 0);
	base_alloc_fail_after(0);
	assert_int_equal(pool_sbuf_reserve(&sb, 1000), POOL_ENOMEM);
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), ref, 64);
	base_alloc_fail_after(-1);

	assert_int_equal(pool_sbuf_reserve(&sb, (size_t)POOL_SBUF_MAX + 1), POOL_EOVERFLOW);
	assert_int_equal(pool_sbuf_resize(&sb, SIZE_MAX), POOL_EOVERFLOW);
	assert_int_equal(pool_sbuf_append(&sb, ref, SIZE_MAX), POOL_EOVERFLOW);
	tu_assert_bytes_equal(pool_sbuf_data(&sb), pool_sbuf_len(&sb), ref, 64);
	pool_sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbuf_inline_and_heap),
	    cmocka_unit_test(test_sbuf_append_resize_copy),
	    cmocka_unit_test(test_sbuf_valid_after_memcpy),
	    cmocka_unit_test(test_sbuf_failure_and_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
