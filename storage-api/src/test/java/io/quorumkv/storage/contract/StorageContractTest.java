package io.quorumkv.storage.contract;

import static io.quorumkv.storage.contract.Entries.allByteValues;
import static io.quorumkv.storage.contract.Entries.bytes;
import static io.quorumkv.storage.contract.Entries.delete;
import static io.quorumkv.storage.contract.Entries.keyNumber;
import static io.quorumkv.storage.contract.Entries.numberedKey;
import static io.quorumkv.storage.contract.Entries.put;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.EntryOrder;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.PurgePolicy;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The contract every {@link Storage} backend must keep (docs/design.md: "Data model and
 * order", "Storage"). A backend's test extends this class and supplies
 * {@link #open(Path)}:
 *
 * <pre>{@code
 * class H2StorageTest extends StorageContractTest {
 *     &#64;Override
 *     protected Storage open(Path dir) {
 *         return H2Storage.open(H2StorageOptions.defaults(dir));
 *     }
 * }
 * }</pre>
 *
 * Each test starts with a fresh instance on an empty folder; {@link #reopen()} closes it
 * and opens a new instance on the same folder to check persistence. A backend judges
 * expiry by a clock it is given: {@link #open(Path)} gives it {@link #clock}, which the
 * expiry tests move (they never sleep).
 */
public abstract class StorageContractTest {

	/** Upper bound for any single wait; generous for slow CI machines. */
	protected static final Duration TIMEOUT = Duration.ofSeconds(120);

	@TempDir
	protected Path dir;

	protected Storage storage;

	/** The clock every instance of the backend under test must judge expiry by. */
	protected final ManualClock clock = ManualClock.startingAt(java.time.Instant.parse("2030-06-01T00:00:00Z"));

	/** Opens the backend on {@code dir}, creating it when empty, with {@link #clock}. */
	protected abstract Storage open(Path dir);

	@BeforeEach
	void openStorage() {
		this.storage = open(this.dir);
	}

	@AfterEach
	void closeStorage() {
		this.storage.close();
	}

	/** Closes the current instance and opens a new one on the same folder. */
	protected Storage reopen() {
		this.storage.close();
		this.storage = open(this.dir);
		return this.storage;
	}

	protected void upsert(Entry entry) {
		this.storage.upsert(entry).block(TIMEOUT);
	}

	protected @Nullable Entry get(byte[] key) {
		return this.storage.get(key).block(TIMEOUT);
	}

	protected @Nullable Entry get(String key) {
		return get(bytes(key));
	}

	protected List<Entry> scan(byte[] from, byte @Nullable [] to) {
		List<Entry> out = this.storage.scan(from, to).collectList().block(TIMEOUT);
		assertThat(out).isNotNull();
		return out;
	}

	protected static List<String> keysOf(List<Entry> entries) {
		return entries.stream().map((e) -> new String(e.key(), java.nio.charset.StandardCharsets.UTF_8)).toList();
	}

	@Nested
	class BasicOps {

		@Test
		void missingKeyIsEmpty() {
			StepVerifier.create(StorageContractTest.this.storage.get(bytes("absent"))).expectComplete().verify(TIMEOUT);
		}

		@Test
		void putThenGetReturnsTheEntry() {
			Entry entry = put("k", "v", 10);
			upsert(entry);
			StepVerifier.create(StorageContractTest.this.storage.get(bytes("k")))
				.expectNext(entry)
				.expectComplete()
				.verify(TIMEOUT);
		}

		@Test
		void binaryValueWithEveryByteRoundTrips() {
			byte[] value = allByteValues();
			byte[] key = allByteValues();
			upsert(Entry.value(key, value, 1));
			Entry read = get(key);
			assertThat(read).isNotNull();
			assertThat(read.value()).containsExactly(value);
			assertThat(read.key()).containsExactly(key);
			assertThat(read.timestamp()).isEqualTo(1);
		}

		@Test
		void emptyValueIsNotATombstone() {
			upsert(Entry.value(bytes("empty"), new byte[0], 5));
			Entry read = get("empty");
			assertThat(read).isNotNull();
			assertThat(read.isTombstone()).isFalse();
			assertThat(read.value()).isEmpty();
		}

		@Test
		void oneMebibyteValueRoundTrips() {
			byte[] value = Entries.randomBytes(new Random(42), 1 << 20);
			upsert(Entry.value(bytes("big"), value, 7));
			Entry read = get("big");
			assertThat(read).isNotNull();
			assertThat(Arrays.equals(read.value(), value)).as("1 MiB value equal").isTrue();
		}

		@Test
		void newerWriteOverwrites() {
			upsert(put("k", "old", 10));
			upsert(put("k", "new", 11));
			assertThat(get("k")).isEqualTo(put("k", "new", 11));
		}

		@Test
		void olderWriteIsIgnored() {
			upsert(put("k", "new", 11));
			upsert(put("k", "old", 10));
			assertThat(get("k")).isEqualTo(put("k", "new", 11));
		}

		@Test
		void keysThatArePrefixesOfEachOtherAreDistinct() {
			upsert(put("a", "1", 1));
			upsert(put("ab", "2", 1));
			upsert(Entry.value(bytes(0x61, 0x00), bytes("3"), 1));
			assertThat(get("a")).isEqualTo(put("a", "1", 1));
			assertThat(get("ab")).isEqualTo(put("ab", "2", 1));
			assertThat(get(bytes(0x61, 0x00))).isEqualTo(Entry.value(bytes(0x61, 0x00), bytes("3"), 1));
			assertThat(get("abc")).isNull();
		}

		@Test
		void keysDifferingOnlyInTrailingSpacesOrZerosAreDistinct() {
			// SQL engines may pad or trim fixed-width and binary keys: "a", "a " and
			// "a\0" are three keys.
			upsert(put("a", "plain", 1));
			upsert(put("a ", "space", 1));
			upsert(put("a  ", "spaces", 1));
			upsert(Entry.value(bytes(0x61, 0x00), bytes("zero"), 1));
			assertThat(get("a")).isEqualTo(put("a", "plain", 1));
			assertThat(get("a ")).isEqualTo(put("a ", "space", 1));
			assertThat(get("a  ")).isEqualTo(put("a  ", "spaces", 1));
			assertThat(get(bytes(0x61, 0x00))).isEqualTo(Entry.value(bytes(0x61, 0x00), bytes("zero"), 1));
			assertThat(scan(bytes("a"), bytes("b"))).hasSize(4);
		}

		@Test
		void keysUpToTheBackendLimitWork() {
			int length = Math.min(StorageContractTest.this.storage.maxKeySize(), 4096);
			byte[] key = new byte[length];
			java.util.Arrays.fill(key, (byte) 'k');
			upsert(Entry.value(key, bytes("long"), 1));
			assertThat(get(key)).isEqualTo(Entry.value(key, bytes("long"), 1));
		}

		@Test
		void nothingHappensBeforeSubscription() {
			StorageContractTest.this.storage.upsert(put("lazy", "v", 1));
			assertThat(get("lazy")).isNull();
		}

		@Test
		void closedStorageRefusesWork() {
			Storage closed = StorageContractTest.this.storage;
			closed.close();
			closed.close(); // idempotent
			assertThatThrownBy(() -> closed.get(bytes("k")).block(TIMEOUT)).isInstanceOf(StorageClosedException.class);
			assertThatThrownBy(() -> closed.upsert(put("k", "v", 1)).block(TIMEOUT))
				.isInstanceOf(StorageClosedException.class);
			StorageContractTest.this.storage = open(StorageContractTest.this.dir);
		}

	}

	@Nested
	class LastWriteWins {

		@Test
		void equalTimestampTombstoneBeatsValue() {
			upsert(delete("k", 5));
			upsert(put("k", "v", 5));
			assertThat(get("k")).isEqualTo(delete("k", 5));

			upsert(put("j", "v", 5));
			upsert(delete("j", 5));
			assertThat(get("j")).isEqualTo(delete("j", 5));
		}

		@Test
		void equalTimestampGreaterUnsignedValueWins() {
			// 0x80 is negative as a signed byte: a signed comparison would pick 0x7F.
			Entry high = Entry.value(bytes("k"), bytes(0x80), 5);
			Entry low = Entry.value(bytes("k"), bytes(0x7F, 0xFF), 5);
			upsert(high);
			upsert(low);
			assertThat(get("k")).isEqualTo(high);

			Entry longer = Entry.value(bytes("j"), bytes(0x01, 0x00), 5);
			Entry prefix = Entry.value(bytes("j"), bytes(0x01), 5);
			upsert(longer);
			upsert(prefix);
			assertThat(get("j")).isEqualTo(longer);
		}

		@Test
		void rewritingTheSameEntryIsIdempotent() {
			upsert(put("k", "v", 5));
			upsert(put("k", "v", 5));
			assertThat(get("k")).isEqualTo(put("k", "v", 5));
		}

		@Test
		void anyArrivalOrderConvergesToTheGreatestVersion() {
			Random random = new Random(20261121);
			for (int round = 0; round < 40; round++) {
				byte[] key = bytes("perm-" + round);
				List<Entry> versions = new ArrayList<>();
				for (int v = 0; v < 8; v++) {
					// Few distinct timestamps, so that ties (value vs value, tombstone vs
					// value) occur.
					long ts = 100 + random.nextInt(4);
					versions.add(random.nextInt(4) == 0 ? Entry.tombstone(key, ts)
							: Entry.value(key, Entries.randomBytes(random, 1 + random.nextInt(3)), ts));
				}
				Entry expected = versions.stream().max(EntryOrder.INSTANCE).orElseThrow();
				Collections.shuffle(versions, random);
				versions.forEach(StorageContractTest.this::upsert);
				assertThat(get(key)).as("round %d, arrival order %s", round, versions).isEqualTo(expected);
			}
		}

		@Test
		void negativeAndExtremeTimestampsOrderNumerically() {
			upsert(put("k", "min", Long.MIN_VALUE));
			upsert(put("k", "neg", -1));
			assertThat(get("k")).isEqualTo(put("k", "neg", -1));
			upsert(put("k", "max", Long.MAX_VALUE));
			upsert(put("k", "zero", 0));
			assertThat(get("k")).isEqualTo(put("k", "max", Long.MAX_VALUE));
		}

	}

	@Nested
	class Tombstones {

		@Test
		void deleteLeavesATombstone() {
			upsert(put("k", "v", 1));
			upsert(delete("k", 2));
			Entry read = get("k");
			assertThat(read).isNotNull();
			assertThat(read.isTombstone()).isTrue();
			assertThat(read.timestamp()).isEqualTo(2);
		}

		@Test
		void olderValueDoesNotResurrectADeletedKey() {
			upsert(delete("k", 5));
			upsert(put("k", "late", 4));
			assertThat(get("k")).isEqualTo(delete("k", 5));
		}

		@Test
		void newerValueAfterDeleteWins() {
			upsert(put("k", "v1", 1));
			upsert(delete("k", 2));
			upsert(put("k", "v2", 3));
			assertThat(get("k")).isEqualTo(put("k", "v2", 3));
		}

		@Test
		void tombstoneOfANeverWrittenKeyIsKept() {
			upsert(delete("ghost", 9));
			assertThat(get("ghost")).isEqualTo(delete("ghost", 9));
			upsert(put("ghost", "old", 8));
			assertThat(get("ghost")).isEqualTo(delete("ghost", 9));
		}

	}

	/**
	 * Expiry (docs/design.md, "Data model and order"): an expiring value reads as itself
	 * until its expiry, then as the tombstone of its timestamp, by the backend's clock.
	 */
	@Nested
	class Expiring {

		private final ManualClock clock = StorageContractTest.this.clock;

		private Entry lease(String key, String value, long timestamp, long ttlSeconds) {
			return Entry.expiring(bytes(key), bytes(value), timestamp,
					io.quorumkv.storage.Expiry.after(timestamp, ttlSeconds));
		}

		@Test
		void anExpiringValueReadsUntilItsExpiryThenAsTheTombstoneOfItsTimestamp() {
			long now = this.clock.micros();
			Entry lease = lease("k", "v", now, 60);
			upsert(lease);
			assertThat(get("k")).isEqualTo(lease);
			this.clock.advance(Duration.ofSeconds(59));
			assertThat(get("k")).as("a second before its expiry").isEqualTo(lease);
			this.clock.advance(Duration.ofSeconds(1));
			assertThat(get("k")).as("at its expiry").isEqualTo(delete("k", now));
			this.clock.advance(Duration.ofDays(400));
			assertThat(get("k")).isEqualTo(delete("k", now));
		}

		@Test
		void scansAnswerExpiredValuesAsTombstones() {
			long now = this.clock.micros();
			upsert(put("a", "plain", now));
			upsert(lease("b", "short", now, 10));
			upsert(lease("c", "long", now, 100));
			assertThat(scan(bytes("a"), null)).containsExactly(put("a", "plain", now), lease("b", "short", now, 10),
					lease("c", "long", now, 100));
			this.clock.advance(Duration.ofSeconds(10));
			assertThat(scan(bytes("a"), null)).containsExactly(put("a", "plain", now), delete("b", now),
					lease("c", "long", now, 100));
			this.clock.advance(Duration.ofSeconds(90));
			assertThat(scan(bytes("a"), null)).containsExactly(put("a", "plain", now), delete("b", now),
					delete("c", now));
		}

		@Test
		void anExpiredValueStillShadowsOlderWrites() {
			long now = this.clock.micros();
			upsert(lease("k", "v", now, 1));
			this.clock.advance(Duration.ofSeconds(2));
			upsert(put("k", "older", now - 1));
			upsert(put("k", "tie, smaller", now));
			assertThat(get("k")).isEqualTo(delete("k", now));
			upsert(put("k", "newer", now + 1));
			assertThat(get("k")).isEqualTo(put("k", "newer", now + 1));
		}

		@Test
		void theExpiryRidesWithTheWinningWrite() {
			long now = this.clock.micros();
			upsert(put("plain-then-lease", "v1", now));
			upsert(lease("plain-then-lease", "v2", now + 1, 10));
			upsert(lease("lease-then-plain", "v1", now, 10));
			upsert(put("lease-then-plain", "v2", now + 1));
			upsert(lease("lease-then-older", "v2", now + 1, 10));
			upsert(put("lease-then-older", "v1", now));
			upsert(lease("lease-then-delete", "v1", now, 10));
			upsert(delete("lease-then-delete", now + 1));
			this.clock.advance(Duration.ofSeconds(11));
			assertThat(get("plain-then-lease")).isEqualTo(delete("plain-then-lease", now + 1));
			assertThat(get("lease-then-plain")).isEqualTo(put("lease-then-plain", "v2", now + 1));
			assertThat(get("lease-then-older")).isEqualTo(delete("lease-then-older", now + 1));
			assertThat(get("lease-then-delete")).isEqualTo(delete("lease-then-delete", now + 1));
		}

		@Test
		void equalValuesOfEqualTimestampsKeepTheEarlierExpiryInAnyOrder() {
			long now = this.clock.micros();
			Entry sooner = lease("a", "v", now, 10);
			Entry later = lease("a", "v", now, 20);
			Entry never = put("a", "v", now);
			upsert(later);
			upsert(sooner);
			upsert(never);
			assertThat(get("a")).isEqualTo(sooner);
			upsert(Entry.expiring(bytes("b"), bytes("v"), now, sooner.expiresAt()));
			upsert(Entry.expiring(bytes("b"), bytes("v"), now, later.expiresAt()));
			upsert(put("c", "v", now));
			upsert(Entry.expiring(bytes("c"), bytes("v"), now, later.expiresAt()));
			assertThat(get("b")).isEqualTo(Entry.expiring(bytes("b"), bytes("v"), now, sooner.expiresAt()));
			assertThat(get("c")).isEqualTo(Entry.expiring(bytes("c"), bytes("v"), now, later.expiresAt()));
		}

		@Test
		void aValueWrittenAfterItsExpiryReadsAsItsTombstone() {
			// A hint or a repair may deliver a write after it expired.
			long now = this.clock.micros();
			upsert(put("k", "older", now - 10));
			upsert(Entry.expiring(bytes("k"), bytes("late"), now - 5, now - 1));
			assertThat(get("k")).isEqualTo(delete("k", now - 5));
			assertThat(scan(bytes("k"), null)).containsExactly(delete("k", now - 5));
		}

		@Test
		void expiriesSurviveReopen() {
			long now = this.clock.micros();
			upsert(lease("a", "v", now, 10));
			StepVerifier
				.create(StorageContractTest.this.storage
					.upsertAll(List.of(lease("b", "v", now, 20), lease("c", "v", now, 30))))
				.expectComplete()
				.verify(TIMEOUT);
			StepVerifier.create(StorageContractTest.this.storage.flush()).expectComplete().verify(TIMEOUT);
			upsert(lease("d", "v", now, 40));
			reopen();
			assertThat(scan(bytes("a"), null)).containsExactly(lease("a", "v", now, 10), lease("b", "v", now, 20),
					lease("c", "v", now, 30), lease("d", "v", now, 40));
			this.clock.advance(Duration.ofSeconds(25));
			reopen();
			assertThat(scan(bytes("a"), null)).containsExactly(delete("a", now), delete("b", now),
					lease("c", "v", now, 30), lease("d", "v", now, 40));
		}

	}

	/**
	 * Purging tombstones ({@link Storage#purgePolicy}, {@link Storage#purgeTombstones}):
	 * a purge pass and then a compaction drop exactly the tombstones the policy allows
	 * (the tests' timestamps are decades old, past any grace period of a backend's own),
	 * never a value, never a tombstone the policy refuses.
	 */
	@Nested
	class Purge {

		private long purgeAndCompact() {
			Long purged = StorageContractTest.this.storage.purgeTombstones().block(TIMEOUT);
			StorageContractTest.this.storage.compact().block(TIMEOUT);
			assertThat(purged).isNotNull().isNotNegative();
			return purged;
		}

		@Test
		void onlyTheTombstonesThePolicyAllowsAreDropped() {
			upsert(put("drop", "v", 1));
			upsert(delete("drop", 2));
			upsert(delete("keep", 3));
			upsert(put("value", "v", 4));
			StorageContractTest.this.storage.purgePolicy(
					(key, timestamp) -> !new String(key, java.nio.charset.StandardCharsets.UTF_8).equals("keep"));
			purgeAndCompact();
			assertThat(get("drop")).isNull();
			assertThat(get("keep")).isEqualTo(delete("keep", 3));
			assertThat(get("value")).isEqualTo(put("value", "v", 4));
			assertThat(keysOf(scan(bytes("a"), null))).containsExactly("keep", "value");
		}

		@Test
		void aKeepAllPolicyKeepsEveryTombstone() {
			upsert(put("k", "v", 1));
			upsert(delete("k", 2));
			StorageContractTest.this.storage.purgePolicy(PurgePolicy.KEEP_ALL);
			assertThat(purgeAndCompact()).isZero();
			assertThat(get("k")).isEqualTo(delete("k", 2));
		}

		@Test
		void thePolicyIsAskedWithTheTombstonesKeyAndTimestamp() {
			upsert(delete("k", 7));
			upsert(put("v", "x", 8));
			List<String> asked = Collections.synchronizedList(new ArrayList<>());
			StorageContractTest.this.storage.purgePolicy((key, timestamp) -> {
				asked.add(new String(key, java.nio.charset.StandardCharsets.UTF_8) + "@" + timestamp);
				return false;
			});
			purgeAndCompact();
			assertThat(asked).contains("k@7").doesNotContain("v@8");
		}

		@Test
		void manyPagesOfTombstonesArePurgedExactlyAsAllowedAndStayPurgedAfterReopen() {
			int count = 1_200;
			for (int i = 0; i < count; i++) {
				upsert(Entry.value(numberedKey(i), bytes("v" + i), 10));
				upsert(Entry.tombstone(numberedKey(i), 11));
			}
			// Every third tombstone stays.
			StorageContractTest.this.storage.purgePolicy((key, timestamp) -> Integer
				.parseInt(new String(key, java.nio.charset.StandardCharsets.UTF_8).substring(4)) % 3 != 0);
			purgeAndCompact();
			reopen();
			List<Entry> left = scan(numberedKey(0), null);
			assertThat(left).hasSize(count / 3).allSatisfy((entry) -> assertThat(entry.isTombstone()).isTrue());
			assertThat(left.getFirst().key()).isEqualTo(numberedKey(0));
			assertThat(left.getLast().key()).isEqualTo(numberedKey(count - 3));
		}

		@Test
		void anExpiredValueIsPurgedAsTheTombstoneOfItsTimestamp() {
			// docs/design.md: storage turns an expired value into a tombstone and purges
			// it under the tombstones' rule.
			long now = StorageContractTest.this.clock.micros();
			upsert(put("expired", "older", 4));
			upsert(Entry.expiring(bytes("expired"), bytes("v"), 5, 6));
			upsert(Entry.expiring(bytes("refused"), bytes("v"), 5, 6));
			Entry live = Entry.expiring(bytes("live"), bytes("v"), 7, now + 60_000_000L);
			upsert(live);
			List<String> asked = Collections.synchronizedList(new ArrayList<>());
			StorageContractTest.this.storage.purgePolicy((key, timestamp) -> {
				String name = new String(key, java.nio.charset.StandardCharsets.UTF_8);
				asked.add(name + "@" + timestamp);
				return !name.equals("refused");
			});
			purgeAndCompact();
			assertThat(get("expired")).as("purged, and the older value stays shadowed").isNull();
			assertThat(get("refused")).isEqualTo(delete("refused", 5));
			assertThat(get("live")).isEqualTo(live);
			assertThat(asked).contains("expired@5", "refused@5").doesNotContain("live@7");
		}

	}

	@Nested
	class Scans {

		@BeforeEach
		void fill() {
			for (String k : List.of("a", "b", "c", "d", "e")) {
				upsert(put(k, "v" + k, 1));
			}
		}

		@Test
		void startIsInclusiveAndEndExclusive() {
			assertThat(keysOf(scan(bytes("b"), bytes("d")))).containsExactly("b", "c");
		}

		@Test
		void openEndRunsToTheLastKey() {
			assertThat(keysOf(scan(bytes("c"), null))).containsExactly("c", "d", "e");
		}

		@Test
		void boundsBetweenKeys() {
			assertThat(keysOf(scan(bytes("bb"), bytes("dd")))).containsExactly("c", "d");
			assertThat(keysOf(scan(bytes("0"), bytes("b")))).containsExactly("a");
			assertThat(keysOf(scan(bytes("f"), null))).isEmpty();
		}

		@Test
		void emptyOrInvertedRangeIsEmpty() {
			assertThat(scan(bytes("c"), bytes("c"))).isEmpty();
			assertThat(scan(bytes("d"), bytes("b"))).isEmpty();
		}

		@Test
		void entriesCarryTheirNewestVersion() {
			upsert(put("c", "newer", 2));
			List<Entry> range = scan(bytes("c"), bytes("d"));
			assertThat(range).containsExactly(put("c", "newer", 2));
		}

		@Test
		void tombstonesAreIncluded() {
			upsert(delete("b", 2));
			List<Entry> range = scan(bytes("a"), null);
			assertThat(keysOf(range)).containsExactly("a", "b", "c", "d", "e");
			assertThat(range.get(1)).isEqualTo(delete("b", 2));
		}

		@Test
		void keysAreInUnsignedByteOrder() {
			byte[][] keys = { bytes(0x7F), bytes(0x80), bytes(0xFF), bytes(0x00), bytes(0x7F, 0x00), bytes(0x80, 0x01),
					bytes(0xFF, 0xFF) };
			for (byte[] k : keys) {
				upsert(Entry.value(k, bytes("x"), 1));
			}
			List<Entry> all = scan(bytes(0x00), null);
			List<byte[]> scanned = all.stream().map(Entry::key).toList();
			List<byte[]> expected = new ArrayList<>(List.of(keys));
			for (String k : List.of("a", "b", "c", "d", "e")) {
				expected.add(bytes(k));
			}
			expected.sort(Keys.ORDER);
			assertThat(scanned).containsExactlyElementsOf(expected);
			assertThat(scan(bytes(0x80), bytes(0xFF))).extracting(Entry::key)
				.containsExactly(bytes(0x80), bytes(0x80, 0x01));
		}

		@Test
		void largeRangeStreamsInOrderWithBackpressure() {
			int count = 100_000;
			Flux.range(0, count)
				.flatMap((i) -> StorageContractTest.this.storage
					.upsert(Entry.value(numberedKey(i), bytes("value-" + i), 1 + i)), 32)
				.then()
				.block(TIMEOUT);
			AtomicLong seen = new AtomicLong();
			byte[][] previous = { null };
			StorageContractTest.this.storage.scan(numberedKey(0), null).limitRate(64).doOnNext((e) -> {
				byte[] prev = previous[0];
				assertThat(prev == null || Keys.compare(prev, e.key()) < 0).as("ascending at %s", e).isTrue();
				previous[0] = e.key();
				seen.incrementAndGet();
			}).then().block(TIMEOUT);
			assertThat(seen).hasValue(count);
			assertThat(scan(numberedKey(49_990), numberedKey(50_000))).extracting(Entry::key)
				.containsExactly(java.util.stream.IntStream.range(49_990, 50_000)
					.mapToObj(Entries::numberedKey)
					.toArray(byte[][]::new));
		}

		@Test
		void aKeyFilterKeepsTheAcceptedKeysInTheirNewestVersion() {
			// Several versions of many keys (a small memtable spreads them over tables),
			// tombstones among them, and older writes that lose. Timestamps near the
			// clock's instant: older tombstones could be purged between two scans.
			int count = 3_000;
			long now = StorageContractTest.this.clock.micros();
			List<Entry> writes = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				writes.add(Entry.value(numberedKey(i), bytes("first-" + i), now + 10));
			}
			for (int i = 0; i < count; i += 3) {
				writes.add(Entry.value(numberedKey(i), bytes("second-" + i), now + 20));
			}
			for (int i = 0; i < count; i += 5) {
				writes.add(Entry.tombstone(numberedKey(i), now + 25));
			}
			for (int i = 0; i < count; i += 7) {
				writes.add(Entry.value(numberedKey(i), bytes("older-" + i), now + 5));
			}
			Flux.fromIterable(writes)
				.concatMap((e) -> StorageContractTest.this.storage.upsert(e), 32)
				.then()
				.block(TIMEOUT);
			java.util.function.Predicate<byte[]> keys = (key) -> java.util.Arrays.hashCode(key) % 3 != 0;

			List<Entry> all = scan(numberedKey(0), null);
			List<Entry> kept = StorageContractTest.this.storage.scan(numberedKey(0), null, keys)
				.collectList()
				.block(TIMEOUT);
			assertThat(kept).containsExactlyElementsOf(all.stream().filter((e) -> keys.test(e.key())).toList());
			assertThat(kept).hasSizeBetween(count / 2, count - count / 5);
			assertThat(kept).anyMatch(Entry::isTombstone).anyMatch((e) -> e.timestamp() == now + 20);

			List<Entry> bounded = StorageContractTest.this.storage.scan(numberedKey(100), numberedKey(2_000), keys)
				.collectList()
				.block(TIMEOUT);
			assertThat(bounded).containsExactlyElementsOf(
					scan(numberedKey(100), numberedKey(2_000)).stream().filter((e) -> keys.test(e.key())).toList());
			assertThat(StorageContractTest.this.storage.scan(numberedKey(0), null, (key) -> false)
				.collectList()
				.block(TIMEOUT)).isEmpty();
		}

		@Test
		void cancelledScanReleasesItsResources() {
			for (int i = 0; i < 2_000; i++) {
				upsert(Entry.value(numberedKey(i), bytes("v"), 1));
			}
			for (int round = 0; round < 50; round++) {
				StepVerifier.create(StorageContractTest.this.storage.scan(numberedKey(0), null).take(3))
					.expectNextCount(3)
					.expectComplete()
					.verify(TIMEOUT);
			}
			StepVerifier.create(StorageContractTest.this.storage.scan(numberedKey(0), null), 5)
				.expectNextCount(5)
				.thenCancel()
				.verify(TIMEOUT);
			// The store still serves reads and writes after abandoned scans.
			upsert(put("after", "v", 1));
			assertThat(get("after")).isEqualTo(put("after", "v", 1));
		}

	}

	@Nested
	class Retain {

		@Test
		void removesTheRejectedKeysWithoutATraceAndKeepsTheOthers() {
			// Recent timestamps by the clock the backend judges by: a backend may purge a
			// tombstone older than its grace period whenever it compacts, which is not
			// what this test is about.
			long now = StorageContractTest.this.clock.micros();
			for (int i = 0; i < 2_000; i++) {
				upsert((i % 7 == 0) ? Entry.tombstone(numberedKey(i), now)
						: Entry.value(numberedKey(i), bytes("v" + i), now));
			}
			StepVerifier.create(StorageContractTest.this.storage.flush()).expectComplete().verify(TIMEOUT);
			for (int i = 1_000; i < 1_500; i++) {
				upsert(Entry.value(numberedKey(i), bytes("newer" + i), now + 1));
			}
			Long removed = StorageContractTest.this.storage.retain((key) -> keyNumber(key) % 3 != 0).block(TIMEOUT);
			int rejected = (int) java.util.stream.IntStream.range(0, 2_000).filter((i) -> i % 3 == 0).count();
			assertThat(removed).isEqualTo(rejected);
			for (int i = 0; i < 2_000; i++) {
				Entry kept = get(numberedKey(i));
				if (i % 3 == 0) {
					assertThat(kept).as("key %d", i).isNull();
				}
				else {
					assertThat(kept).as("key %d", i).isNotNull();
				}
			}
			assertThat(scan(numberedKey(0), null)).hasSize(2_000 - rejected);
			reopen();
			assertThat(get(numberedKey(3))).as("gone for good").isNull();
			assertThat(get(numberedKey(1_001))).isEqualTo(Entry.value(numberedKey(1_001), bytes("newer1001"), now + 1));
			upsert(Entry.value(numberedKey(3), bytes("again"), 1));
			assertThat(get(numberedKey(3))).as("a key removed can be written again, even older")
				.isEqualTo(Entry.value(numberedKey(3), bytes("again"), 1));
		}

		@Test
		void looksAtNoMoreEntriesASecondThanItsRate() {
			for (int i = 0; i < 600; i++) {
				upsert(Entry.value(numberedKey(i), bytes("v" + i), 1));
			}
			long start = System.nanoTime();
			Long removed = StorageContractTest.this.storage.retain((key) -> keyNumber(key) % 2 != 0, 1_000)
				.block(TIMEOUT);
			long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
			assertThat(removed).isEqualTo(300);
			// 600 entries at 1,000 a second: 0.6 s, less a first chunk that need not
			// wait.
			assertThat(elapsedMillis).as("ms for 600 entries at 1,000 a second").isGreaterThanOrEqualTo(500);
			assertThat(get(numberedKey(1))).isNotNull();
			assertThat(get(numberedKey(2))).isNull();
		}

		@Test
		void aRateThatIsNotPositiveIsRefused() {
			assertThatThrownBy(() -> StorageContractTest.this.storage.retain((key) -> true, 0))
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("positive");
		}

		@Test
		void retainingEverythingRemovesNothing() {
			upsert(put("a", "1", 1));
			assertThat(StorageContractTest.this.storage.retain((key) -> true).block(TIMEOUT)).isZero();
			assertThat(get("a")).isEqualTo(put("a", "1", 1));
		}

	}

	@Nested
	class Persistence {

		@Test
		void dataSurvivesCloseAndReopen() {
			upsert(put("k1", "v1", 1));
			upsert(delete("k2", 2));
			upsert(Entry.value(allByteValues(), allByteValues(), 3));
			reopen();
			assertThat(get("k1")).isEqualTo(put("k1", "v1", 1));
			assertThat(get("k2")).isEqualTo(delete("k2", 2));
			assertThat(get(allByteValues())).isEqualTo(Entry.value(allByteValues(), allByteValues(), 3));
			assertThat(get("never")).isNull();
		}

		@Test
		void flushedAndUnflushedWritesSurviveReopen() {
			for (int i = 0; i < 1_000; i++) {
				upsert(Entry.value(numberedKey(i), bytes("a" + i), 10));
			}
			StepVerifier.create(StorageContractTest.this.storage.flush()).expectComplete().verify(TIMEOUT);
			for (int i = 500; i < 1_500; i++) {
				upsert(Entry.value(numberedKey(i), bytes("b" + i), 20));
			}
			reopen();
			for (int i = 0; i < 1_500; i++) {
				String expected = (i < 500) ? "a" + i : "b" + i;
				assertThat(get(numberedKey(i))).as("key %d", i)
					.isEqualTo(Entry.value(numberedKey(i), bytes(expected), (i < 500) ? 10 : 20));
			}
			assertThat(scan(numberedKey(0), null)).hasSize(1_500);
		}

		@Test
		void orderingStillAppliesAfterReopen() {
			upsert(put("k", "v", 10));
			reopen();
			upsert(put("k", "older", 9));
			assertThat(get("k")).isEqualTo(put("k", "v", 10));
			upsert(delete("k", 10));
			reopen();
			assertThat(get("k")).isEqualTo(delete("k", 10));
		}

		@Test
		void largeValueSurvivesReopen() {
			byte[] value = Entries.randomBytes(new Random(7), 1 << 20);
			upsert(Entry.value(bytes("big"), value, 1));
			reopen();
			reopen();
			Entry read = get("big");
			assertThat(read).isNotNull();
			assertThat(Arrays.equals(read.value(), value)).isTrue();
		}

	}

	@Nested
	class UpsertAll {

		private void upsertAll(Entry... entries) {
			StepVerifier.create(StorageContractTest.this.storage.upsertAll(List.of(entries)))
				.expectComplete()
				.verify(TIMEOUT);
		}

		@Test
		void keepsEveryEntryOfTheList() {
			upsertAll(put("a", "1", 1), delete("b", 2), Entry.value(allByteValues(), allByteValues(), 3));
			assertThat(get("a")).isEqualTo(put("a", "1", 1));
			assertThat(get("b")).isEqualTo(delete("b", 2));
			assertThat(get(allByteValues())).isEqualTo(Entry.value(allByteValues(), allByteValues(), 3));
		}

		@Test
		void anEmptyListCompletes() {
			upsertAll();
			assertThat(scan(bytes(0), null)).isEmpty();
		}

		@Test
		void entriesOfOneKeyKeepTheGreatestWhereverItIsInTheList() {
			upsertAll(put("k", "new", 11), put("k", "old", 10));
			upsertAll(put("j", "old", 10), put("j", "new", 11));
			upsertAll(put("t", "value", 5), delete("t", 5));
			upsertAll(put("u", "a", 5), put("u", "b", 5));
			assertThat(get("k")).isEqualTo(put("k", "new", 11));
			assertThat(get("j")).isEqualTo(put("j", "new", 11));
			assertThat(get("t")).isEqualTo(delete("t", 5));
			assertThat(get("u")).isEqualTo(put("u", "b", 5));
		}

		@Test
		void olderEntriesThanTheKeptOnesAreIgnored() {
			upsert(put("k", "kept", 20));
			upsertAll(put("k", "older", 10), put("other", "v", 10));
			assertThat(get("k")).isEqualTo(put("k", "kept", 20));
			assertThat(get("other")).isEqualTo(put("other", "v", 10));
		}

		@Test
		void aLargeListSurvivesReopen() {
			List<Entry> entries = new ArrayList<>();
			for (int i = 0; i < 500; i++) {
				entries.add(Entry.value(numberedKey(i), bytes("v" + i), 7));
			}
			StepVerifier.create(StorageContractTest.this.storage.upsertAll(entries)).expectComplete().verify(TIMEOUT);
			reopen();
			for (int i = 0; i < 500; i++) {
				assertThat(get(numberedKey(i))).as("key %d", i)
					.isEqualTo(Entry.value(numberedKey(i), bytes("v" + i), 7));
			}
		}

		@Test
		void isLazy() {
			Mono<Void> pending = StorageContractTest.this.storage.upsertAll(List.of(put("lazy", "v", 1)));
			assertThat(get("lazy")).isNull();
			StepVerifier.create(pending).expectComplete().verify(TIMEOUT);
			assertThat(get("lazy")).isEqualTo(put("lazy", "v", 1));
		}

	}

	@Nested
	class Concurrency {

		@Test
		void distinctKeysFromManyThreadsAreAllKept() throws Exception {
			int threads = 8;
			int perThread = 500;
			runConcurrently(threads, (t) -> {
				for (int i = 0; i < perThread; i++) {
					upsert(Entry.value(numberedKey(t * perThread + i), bytes("t" + t), 1));
				}
			});
			for (int i = 0; i < threads * perThread; i++) {
				Entry read = get(numberedKey(i));
				assertThat(read).as("key %d", i).isNotNull();
				assertThat(read.value()).isEqualTo(bytes("t" + (i / perThread)));
			}
			assertThat(scan(numberedKey(0), null)).hasSize(threads * perThread);
		}

		@Test
		void oneKeyFromManyThreadsConvergesToTheGreatestEntry() throws Exception {
			int threads = 8;
			int perThread = 300;
			byte[] key = bytes("contended");
			List<List<Entry>> plans = new ArrayList<>();
			Random random = new Random(99);
			for (int t = 0; t < threads; t++) {
				List<Entry> plan = new ArrayList<>();
				for (int i = 0; i < perThread; i++) {
					long ts = random.nextInt(200);
					plan.add(random.nextInt(5) == 0 ? Entry.tombstone(key, ts)
							: Entry.value(key, Entries.randomBytes(random, 1 + random.nextInt(4)), ts));
				}
				plans.add(plan);
			}
			Entry expected = plans.stream().flatMap(List::stream).max(EntryOrder.INSTANCE).orElseThrow();
			runConcurrently(threads, (t) -> plans.get(t).forEach(StorageContractTest.this::upsert));
			assertThat(get(key)).isEqualTo(expected);
			reopen();
			assertThat(get(key)).isEqualTo(expected);
		}

		@Test
		void overlappingListsFromManyThreadsConvergeToTheGreatestEntries() throws Exception {
			// Lists that share keys, each in its own order: a backend that keeps a list
			// in one transaction must neither deadlock nor lose an entry to another.
			int threads = 6;
			int listsPerThread = 40;
			int keys = 24;
			Random random = new Random(4321);
			List<List<List<Entry>>> plans = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				List<List<Entry>> lists = new ArrayList<>();
				for (int l = 0; l < listsPerThread; l++) {
					List<Entry> list = new ArrayList<>();
					for (int i = 0; i < 12; i++) {
						byte[] key = numberedKey(random.nextInt(keys));
						long ts = random.nextInt(500);
						list.add(random.nextInt(6) == 0 ? Entry.tombstone(key, ts)
								: Entry.value(key, Entries.randomBytes(random, 1 + random.nextInt(4)), ts));
					}
					lists.add(list);
				}
				plans.add(lists);
			}
			runConcurrently(threads, (t) -> {
				for (List<Entry> list : plans.get(t)) {
					StepVerifier.create(StorageContractTest.this.storage.upsertAll(list))
						.expectComplete()
						.verify(TIMEOUT);
				}
			});
			for (int k = 0; k < keys; k++) {
				byte[] key = numberedKey(k);
				Entry expected = plans.stream()
					.flatMap(List::stream)
					.flatMap(List::stream)
					.filter((entry) -> Arrays.equals(entry.key(), key))
					.max(EntryOrder.INSTANCE)
					.orElse(null);
				assertThat(get(key)).as("key %d", k).isEqualTo(expected);
			}
		}

		@Test
		void simultaneousVersionsConvergeRoundByRound() throws Exception {
			// Every round, all threads upsert their version of one fresh key at the same
			// moment:
			// the widest possible race between reading the kept entry and replacing it.
			int threads = 8;
			int rounds = 100;
			Random random = new Random(1234);
			Entry[][] versions = new Entry[rounds][threads];
			for (int r = 0; r < rounds; r++) {
				byte[] key = bytes("round-" + r);
				for (int t = 0; t < threads; t++) {
					versions[r][t] = Entry.value(key, bytes("t" + t), random.nextInt(1_000));
				}
			}
			java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threads);
			runConcurrently(threads, (t) -> {
				for (int r = 0; r < rounds; r++) {
					barrier.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
					upsert(versions[r][t]);
				}
			});
			for (int r = 0; r < rounds; r++) {
				Entry expected = java.util.Arrays.stream(versions[r]).max(EntryOrder.INSTANCE).orElseThrow();
				assertThat(get(expected.key())).as("round %d", r).isEqualTo(expected);
			}
		}

		@Test
		void keptVersionNeverGoesBackwards() throws Exception {
			// Writers race with ascending, interleaved timestamps; a read-then-write
			// upsert
			// lets an older write overwrite a newer one, which the readers see as a
			// regression.
			byte[] key = bytes("monotonic");
			int writers = 6;
			int perWriter = 2_000;
			java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
			runConcurrently(writers + 2, (t) -> {
				if (t < writers) {
					for (int i = 0; i < perWriter; i++) {
						upsert(Entry.value(key, bytes("w" + t), (long) i * writers + t));
					}
					return;
				}
				long last = Long.MIN_VALUE;
				for (int reads = 0; reads < 1_000_000 && !done.get(); reads++) {
					Entry read = get(key);
					if (read != null) {
						assertThat(read.timestamp()).as("kept timestamp after %d", last).isGreaterThanOrEqualTo(last);
						last = read.timestamp();
					}
					if (reads > 100 && t == writers && last == (long) perWriter * writers - 1) {
						done.set(true);
					}
				}
			});
			assertThat(get(key))
				.isEqualTo(Entry.value(key, bytes("w" + (writers - 1)), (long) perWriter * writers - 1));
		}

		@Test
		void readsDuringWritesSeeOnlyWrittenVersions() throws Exception {
			byte[] key = bytes("rw");
			runConcurrently(4, (t) -> {
				for (int i = 1; i <= 400; i++) {
					if (t % 2 == 0) {
						upsert(Entry.value(key, bytes(t + ":" + i), i));
					}
					else {
						Entry read = get(key);
						if (read != null) {
							String value = new String(read.value(), java.nio.charset.StandardCharsets.UTF_8);
							assertThat(value).endsWith(":" + read.timestamp());
						}
					}
				}
			});
			assertThat(get(key)).isEqualTo(Entry.value(key, bytes("2:400"), 400));
		}

		/**
		 * Runs {@code body} on {@code threads} threads at once and waits for all of them.
		 * The first failure ends the wait and interrupts the others, so a thread that
		 * fails while the others wait at a barrier surfaces as itself, not as a barrier
		 * timeout.
		 */
		private void runConcurrently(int threads, ThreadBody body) throws Exception {
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				CountDownLatch start = new CountDownLatch(1);
				ExecutorCompletionService<Integer> done = new ExecutorCompletionService<>(pool);
				for (int t = 0; t < threads; t++) {
					int id = t;
					done.submit(() -> {
						start.await();
						body.run(id);
						return id;
					});
				}
				start.countDown();
				long deadline = System.nanoTime() + TIMEOUT.toNanos();
				for (int finished = 0; finished < threads; finished++) {
					Future<Integer> next = done.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
					if (next == null) {
						throw new TimeoutException(
								(threads - finished) + " of " + threads + " threads still running after " + TIMEOUT);
					}
					next.get();
				}
			}
			finally {
				pool.shutdownNow();
			}
		}

	}

	@FunctionalInterface
	interface ThreadBody {

		void run(int thread) throws Exception;

	}

}
