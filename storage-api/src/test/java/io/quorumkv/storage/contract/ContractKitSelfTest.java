package io.quorumkv.storage.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Expiry;
import io.quorumkv.storage.Keys;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageClosedException;
import io.quorumkv.storage.StorageStats;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.platform.testkit.engine.EngineExecutionResults;
import org.junit.platform.testkit.engine.EngineTestKit;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The kit must catch broken backends: each defect below, alone, makes some of its tests
 * fail, and the correct model makes none fail.
 */
class ContractKitSelfTest {

	enum Defect {

		/** Last arrival wins, timestamps ignored. */
		IGNORES_TIMESTAMPS,
		/** On equal timestamps a value beats a tombstone. */
		VALUE_BEATS_TOMBSTONE_ON_TIE,
		/** Values compared as signed bytes on ties. */
		SIGNED_VALUE_TIE_BREAK,
		/** Keys sorted as signed bytes. */
		SIGNED_KEY_ORDER,
		/** Nothing is kept across close. */
		FORGETS_ON_CLOSE,
		/** Scans skip tombstones. */
		SCAN_SKIPS_TOMBSTONES,
		/** Scans include the end key. */
		SCAN_END_INCLUSIVE,
		/** Read-then-write without atomicity: concurrent upserts lose updates. */
		LOST_UPDATES,
		/** Expired values are answered as values. */
		IGNORES_EXPIRY,
		/** The expiry is not stored: every value lives for ever. */
		DROPS_EXPIRY,
		/**
		 * Equal values of equal timestamps: the one first written stays, whatever its
		 * expiry.
		 */
		FIRST_OF_EQUAL_VALUES_STAYS,
		/**
		 * Reads judge expiry by the system clock, not the clock the backend was given.
		 */
		SYSTEM_CLOCK

	}

	static volatile Defect defect = Defect.IGNORES_TIMESTAMPS;

	@ParameterizedTest
	@EnumSource(Defect.class)
	void everyDefectFailsTheKit(Defect injected) {
		defect = injected;
		EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
			.selectors(selectClass(BrokenStorageKit.class))
			.execute();
		assertThat(results.testEvents().failed().count()).as("failed tests with defect %s", injected).isPositive();
	}

	@org.junit.jupiter.api.Test
	void correctModelPassesTheKit() {
		EngineExecutionResults results = EngineTestKit.engine("junit-jupiter")
			.selectors(selectClass(ModelKit.class))
			.execute();
		assertThat(results.testEvents().failed().count()).isZero();
		assertThat(results.testEvents().succeeded().count()).isGreaterThan(25);
	}

	/**
	 * Not matched by Surefire's patterns (nested class): run only through the engine
	 * above.
	 */
	static class BrokenStorageKit extends StorageContractTest {

		@Override
		protected Storage open(Path dir) {
			return new BrokenStorage(dir, defect, this.clock);
		}

	}

	static class ModelKit extends StorageContractTest {

		@Override
		protected Storage open(Path dir) {
			return ModelStorage.open(dir, this.clock);
		}

	}

	static final class BrokenStorage implements Storage {

		private static final Map<Path, ConcurrentSkipListMap<byte[], Entry>> DISKS = new ConcurrentHashMap<>();

		private static final Comparator<byte[]> SIGNED = Arrays::compare;

		private final ConcurrentSkipListMap<byte[], Entry> data;

		private final Defect defect;

		private final AtomicBoolean closed = new AtomicBoolean();

		private final Clock clock;

		BrokenStorage(Path dir, Defect defect, Clock clock) {
			this.defect = defect;
			this.clock = (defect == Defect.SYSTEM_CLOCK) ? Clock.systemUTC() : clock;
			Comparator<byte[]> order = (defect == Defect.SIGNED_KEY_ORDER) ? SIGNED : Keys.ORDER;
			this.data = (defect == Defect.FORGETS_ON_CLOSE) ? new ConcurrentSkipListMap<>(order)
					: DISKS.computeIfAbsent(dir.toAbsolutePath().resolve(defect.name()),
							(d) -> new ConcurrentSkipListMap<>(order));
		}

		private boolean wins(Entry next, @Nullable Entry kept) {
			if (kept == null || this.defect == Defect.IGNORES_TIMESTAMPS) {
				return true;
			}
			if (next.timestamp() != kept.timestamp()) {
				return next.timestamp() > kept.timestamp();
			}
			if (next.isTombstone() || kept.isTombstone()) {
				boolean tombstoneWins = this.defect != Defect.VALUE_BEATS_TOMBSTONE_ON_TIE;
				return next.isTombstone() == tombstoneWins && !(next.isTombstone() && kept.isTombstone());
			}
			int cmp = (this.defect == Defect.SIGNED_VALUE_TIE_BREAK) ? Arrays.compare(next.value(), kept.value())
					: Arrays.compareUnsigned(next.value(), kept.value());
			if (cmp == 0 && this.defect != Defect.FIRST_OF_EQUAL_VALUES_STAYS) {
				return next.expiresAt() < kept.expiresAt();
			}
			return cmp > 0;
		}

		private @Nullable Entry seen(@Nullable Entry kept) {
			return (kept == null || this.defect == Defect.IGNORES_EXPIRY) ? kept
					: kept.asSeenAt(Expiry.nowMicros(this.clock));
		}

		@Override
		public Mono<Entry> get(byte[] key) {
			return Mono.fromCallable(() -> {
				check();
				return seen(this.data.get(key));
			});
		}

		@Override
		public Mono<Void> upsert(Entry written) {
			return Mono.fromRunnable(() -> {
				check();
				Entry entry = (this.defect == Defect.DROPS_EXPIRY)
						? new Entry(written.key(), written.value(), written.timestamp()) : written;
				if (this.defect == Defect.LOST_UPDATES) {
					Entry kept = this.data.get(entry.key());
					// A read-then-write backend has a round trip here.
					java.util.concurrent.locks.LockSupport.parkNanos(10_000);
					if (wins(entry, kept)) {
						this.data.put(entry.key(), entry);
					}
				}
				else {
					this.data.merge(entry.key(), entry, (kept, next) -> wins(next, kept) ? next : kept);
				}
			});
		}

		@Override
		public Flux<Entry> scan(byte[] fromInclusive, byte @Nullable [] toExclusive) {
			return Flux.defer(() -> {
				check();
				boolean endInclusive = this.defect == Defect.SCAN_END_INCLUSIVE;
				NavigableMap<byte[], Entry> range = (toExclusive == null) ? this.data.tailMap(fromInclusive, true)
						: (this.data.comparator().compare(fromInclusive, toExclusive) > 0) ? new java.util.TreeMap<>()
								: this.data.subMap(fromInclusive, true, toExclusive, endInclusive);
				return Flux.fromIterable(range.values())
					.map(this::seen)
					.filter((e) -> !(this.defect == Defect.SCAN_SKIPS_TOMBSTONES && e.isTombstone()));
			});
		}

		@Override
		public Mono<Void> flush() {
			return Mono.empty();
		}

		@Override
		public StorageStats stats() {
			return new StorageStats("broken", Map.of(), Map.of(), null);
		}

		@Override
		public void close() {
			this.closed.set(true);
		}

		private void check() {
			if (this.closed.get()) {
				throw new StorageClosedException("broken");
			}
		}

	}

}
