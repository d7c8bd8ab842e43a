package io.quorumkv.service.replication;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import reactor.core.publisher.Flux;

/**
 * The coordinator's merge of a range read: the ring members' local entries, asked for
 * page by page, merged by key into the live entries of the range.
 *
 * <p>
 * A member is asked for a page of at most {@code pageSize} entries, tombstones and older
 * versions included, from a key on. A page shorter than that is the member's last in the
 * range; after a full page the member is asked for the next one, from just after the
 * page's last key, and only once the whole page has reached the merge and the merge wants
 * more of that member (it takes up to {@link #PREFETCH} entries ahead). A k-way merge
 * emits a key only when it has the next key of every member that is not exhausted, so
 * nothing past the last key of a full page is emitted before that member's next page is
 * in: a newer version or a tombstone there can still decide the key. Per key the greatest
 * entry ({@link EntryOrder}) wins and tombstones are dropped; the merge stops at
 * {@code limit} live entries and cancels what is left.
 *
 * <p>
 * Invariants: the merge holds at most {@link #PREFETCH} entries per member (and what the
 * member's page has in flight), whatever the range's size; a member is asked for its next
 * page only when the merge needs it, so a short scan over a large range costs each member
 * one page of about the limit; a member's stream is strictly increasing in key, the pages
 * of one member never overlap.
 */
final class RangeMerge {

	/**
	 * Entries the merge takes ahead from each member. Less than a page's slack over the
	 * limit ({@code quorumkv.cluster.scan.page-slack}), so that a member's first page
	 * usually ends the scan without asking for a second.
	 */
	static final int PREFETCH = 32;

	private static final Comparator<Entry> KEY_THEN_NEWEST = Comparator.<Entry, byte[]>comparing(Entry::key, Keys.ORDER)
		.thenComparing(EntryOrder.INSTANCE.reversed());

	private RangeMerge() {
	}

	/**
	 * One member's side of the merge: one page of its local entries.
	 */
	@FunctionalInterface
	interface Member {

		/**
		 * At most {@code limit} of the member's local entries from {@code fromInclusive}
		 * to the range's end, tombstones included, in key order; fewer only when the
		 * range has no more. Lazy: nothing is asked before the subscription.
		 */
		Flux<Entry> page(byte[] fromInclusive, int limit);

	}

	/** {@link #merge(List, byte[], int, int, long, long)} with no value expired. */
	static Flux<Entry> merge(List<Member> members, byte[] fromInclusive, int pageSize, int tolerated, long limit) {
		return merge(members, fromInclusive, pageSize, tolerated, limit, Long.MIN_VALUE);
	}

	/**
	 * The live entries from {@code fromInclusive} on, at most {@code limit}, merged from
	 * the members' pages of {@code pageSize} entries: the greatest entry of each key,
	 * unless it is a tombstone or a value expired at {@code nowMicros}. A member that
	 * fails (at any page) is left out, its entries already merged kept, as long as no
	 * more than {@code tolerated} members failed; past that the merge fails with the
	 * error.
	 */
	static Flux<Entry> merge(List<Member> members, byte[] fromInclusive, int pageSize, int tolerated, long limit,
			long nowMicros) {
		if (pageSize < 1) {
			throw new IllegalArgumentException("pageSize must be at least 1, not " + pageSize);
		}
		return Flux.defer(() -> {
			AtomicInteger failed = new AtomicInteger();
			@SuppressWarnings("unchecked")
			Flux<Entry>[] scans = new Flux[members.size()];
			for (int i = 0; i < scans.length; i++) {
				scans[i] = paged(members.get(i), fromInclusive, pageSize).onErrorResume(
						(error) -> (failed.incrementAndGet() <= tolerated) ? Flux.empty() : Flux.error(error));
			}
			return Flux.mergeComparing(Math.min(PREFETCH, pageSize), KEY_THEN_NEWEST, scans)
				.distinctUntilChanged((entry) -> ByteBuffer.wrap(entry.key()))
				.filter((entry) -> !entry.isTombstone() && !entry.isExpiredAt(nowMicros))
				.take(limit, true);
		});
	}

	/**
	 * A member's entries of the range as one stream, read a page at a time: the next page
	 * is subscribed to (asked for) only once the one before has completed and more is
	 * requested.
	 */
	private static Flux<Entry> paged(Member member, byte[] fromInclusive, int pageSize) {
		return Flux.defer(() -> {
			Cursor cursor = new Cursor(fromInclusive);
			return Flux.<Cursor>generate((sink) -> {
				if (cursor.exhausted) {
					sink.complete();
				}
				else {
					sink.next(cursor);
				}
			})
				.concatMap((next) -> member.page(next.from, pageSize)
					.doOnNext(next::saw)
					.doOnComplete(() -> next.pageEnded(pageSize)), 0);
		});
	}

	/**
	 * Where a member's next page starts and whether it has one. Touched only by the
	 * signals of the member's pages, which are serialized.
	 */
	private static final class Cursor {

		private byte[] from;

		private byte[] last = new byte[0];

		private int count;

		private boolean exhausted;

		Cursor(byte[] from) {
			this.from = from;
		}

		void saw(Entry entry) {
			// A member answering out of order or again from before its page would
			// repeat or hide keys: fail it like a member that stopped answering.
			if (Keys.compare(entry.key(), this.from) < 0
					|| (this.count > 0 && Keys.compare(entry.key(), this.last) <= 0)) {
				throw new IllegalStateException("a member's page is not in increasing key order from its start");
			}
			this.last = entry.key();
			this.count++;
		}

		/**
		 * A page shorter than {@code pageSize} was the member's last in the range. A full
		 * one may have more after it, and so may a longer one: a node of a version before
		 * the limit sends the rest of the range, and its next page comes back empty.
		 */
		void pageEnded(int pageSize) {
			if (this.count < pageSize) {
				this.exhausted = true;
			}
			else {
				this.from = successor(this.last);
				this.count = 0;
			}
		}

	}

	/**
	 * The least key greater than {@code key} in unsigned byte order: {@code key + 0x00}.
	 */
	static byte[] successor(byte[] key) {
		return Arrays.copyOf(key, key.length + 1);
	}

}
