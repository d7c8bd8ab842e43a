package io.quorumkv.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Versions and conditional writes against {@link StubNode}, a node that applies each
 * request atomically: what each call sends and makes of 201/202, 412 and 501, and
 * {@code update}'s retry loop under contention.
 */
class ConditionalWritesTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void conditionsHoldOnlyOnTheVersionNamedAndAFailedOneGivesTheCurrentVersion() {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED); QuorumKvClient client = client(node)) {
			BlockingQuorumKvClient kv = client.blocking();
			ConditionResult created = kv.putIfAbsent("k", bytes("a"));
			assertThat(created.held()).isTrue();
			long v1 = created.version().orElseThrow();
			assertThat(kv.getVersioned("k")).contains(new VersionedValue(bytes("a"), v1));

			assertThat(kv.putIfAbsent("k", bytes("b"))).isEqualTo(new ConditionResult(false, OptionalLong.of(v1)));
			ConditionResult replaced = kv.putIf("k", bytes("c"), v1);
			assertThat(replaced.held()).isTrue();
			long v2 = replaced.version().orElseThrow();
			assertThat(v2).isNotEqualTo(v1);
			assertThat(kv.putIf("k", bytes("d"), v1)).isEqualTo(new ConditionResult(false, OptionalLong.of(v2)));
			assertThat(kv.deleteIf("k", v1)).isEqualTo(new ConditionResult(false, OptionalLong.of(v2)));
			assertThat(kv.get("k")).hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("c")));

			assertThat(kv.deleteIf("k", v2).held()).isTrue();
			assertThat(kv.get("k")).isEmpty();
			// absent: a 412 without an ETag, so no current version
			assertThat(kv.putIf("k", bytes("e"), v2)).isEqualTo(new ConditionResult(false, OptionalLong.empty()));
			assertThat(kv.deleteIf("k", v2)).isEqualTo(new ConditionResult(false, OptionalLong.empty()));
			assertThat(node.conditionalWrites()).isEqualTo(8);
			assertThat(node.plainWrites()).isZero();

			assertThatIllegalArgumentException().isThrownBy(() -> client.putIf("k", bytes("x"), 0));
			assertThatIllegalArgumentException().isThrownBy(() -> client.deleteIf("k", -1));
		}
	}

	@Test
	void theAsyncFaceGivesTheSameAnswers() {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED); QuorumKvClient client = client(node)) {
			AsyncQuorumKvClient async = client.async();
			ConditionResult created = async.putIfAbsent("k", bytes("a")).orTimeout(30, TimeUnit.SECONDS).join();
			long v1 = created.version().orElseThrow();
			assertThat(async.putIf("k", bytes("b"), v1 + 1).orTimeout(30, TimeUnit.SECONDS).join())
				.isEqualTo(new ConditionResult(false, OptionalLong.of(v1)));
			assertThat(async.update("k", (current) -> concat(current, "+")).orTimeout(30, TimeUnit.SECONDS).join())
				.isEqualTo(bytes("a+"));
			assertThat(async.deleteIf("k", v1).orTimeout(30, TimeUnit.SECONDS).join().held()).isFalse();
			assertThat(node.value("k")).hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("a+")));
		}
	}

	@Test
	void serialReadsAskForConsistencySerialOnEveryFace() {
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED); QuorumKvClient client = client(node)) {
			BlockingQuorumKvClient kv = client.blocking();
			assertThat(kv.getSerial("k")).isEmpty();
			long v1 = kv.putIfAbsent("k", bytes("a")).version().orElseThrow();
			VersionedValue expected = new VersionedValue(bytes("a"), v1);
			assertThat(kv.getSerial("k")).contains(expected);
			assertThat(kv.getSerial(bytes("k"))).contains(expected);
			assertThat(client.async().getSerial("k").orTimeout(30, TimeUnit.SECONDS).join()).contains(expected);
			assertThat(client.async().getSerial(bytes("k")).orTimeout(30, TimeUnit.SECONDS).join()).contains(expected);
			assertThat(client.getSerial(bytes("k")).block(WAIT)).isEqualTo(expected);
			assertThat(node.serialReads()).isEqualTo(6);
			// a plain read is not a serial one
			assertThat(kv.getVersioned("k")).contains(expected);
			assertThat(node.serialReads()).isEqualTo(6);
		}
	}

	@Test
	void keysAsBytesTakeTheSameConditionsAsTheirText() {
		byte[] key = "k\u00e9".getBytes(StandardCharsets.UTF_8);
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED); QuorumKvClient client = client(node)) {
			BlockingQuorumKvClient kv = client.blocking();
			long v1 = kv.putIfAbsent(key, bytes("a")).version().orElseThrow();
			assertThat(kv.putIfAbsent("k\u00e9", bytes("b")))
				.isEqualTo(new ConditionResult(false, OptionalLong.of(v1)));
			long v2 = kv.putIf(key, bytes("c"), v1).version().orElseThrow();
			assertThat(kv.putIf(key, bytes("d"), v1)).isEqualTo(new ConditionResult(false, OptionalLong.of(v2)));
			assertThat(kv.update(key, (current) -> concat(current, "+"))).isEqualTo(bytes("c+"));
			assertThat(client.async()
				.update(key, (current) -> concat(current, "!"))
				.orTimeout(30, TimeUnit.SECONDS)
				.join()).isEqualTo(bytes("c+!"));
			assertThat(node.value("k\u00e9")).hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("c+!")));
			long v3 = kv.getVersioned(key).orElseThrow().version();
			assertThat(client.async().deleteIf(key, v2).orTimeout(30, TimeUnit.SECONDS).join())
				.isEqualTo(new ConditionResult(false, OptionalLong.of(v3)));
			assertThat(kv.deleteIf(key, v3).held()).isTrue();
			assertThat(node.value("k\u00e9")).isEmpty();
			assertThat(client.putIfAbsent(key, bytes("e")).block(WAIT).held()).isTrue();
			assertThat(node.conditionalWrites()).isEqualTo(9);
			assertThat(node.plainWrites()).isZero();
			assertThatIllegalArgumentException().isThrownBy(() -> client.putIf(key, bytes("x"), 0));
		}
	}

	@Test
	void eightThreadsIncrementingOneCounterByUpdateLoseNoIncrement() throws Exception {
		int threads = 8;
		int each = 40;
		UpdatePolicy patient = new UpdatePolicy(200, Duration.ofMillis(1), Duration.ofMillis(20));
		try (StubNode node = StubNode.start(StubNode.Mode.VERSIONED); QuorumKvClient client = client(node)) {
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				List<Future<?>> done = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					done.add(pool.submit(() -> {
						for (int i = 0; i < each; i++) {
							client.blocking().update("counter", ConditionalWritesTest::increment, patient);
						}
						return null;
					}));
				}
				for (Future<?> future : done) {
					future.get(2, TimeUnit.MINUTES);
				}
			}
			finally {
				pool.shutdownNow();
			}
			assertThat(node.value("counter").map(ConditionalWritesTest::count)).contains((long) threads * each);
			// every increment is one conditional write that held, plus those that lost
			assertThat(node.conditionalWrites()).isGreaterThanOrEqualTo(threads * each);
			assertThat(node.plainWrites()).isZero();
		}
	}

	@Test
	void anUpdateThatLosesEveryRoundFailsClearlyAfterItsAttempts() {
		try (StubNode node = StubNode.start(StubNode.Mode.CONTENDED); QuorumKvClient client = client(node)) {
			client.blocking().put("k", bytes("a"));
			UpdatePolicy three = new UpdatePolicy(3, Duration.ZERO, Duration.ZERO);
			assertThatExceptionOfType(UpdateConflictException.class)
				.isThrownBy(() -> client.update("k", (current) -> concat(current, "+"), three).block(WAIT))
				.satisfies((ex) -> {
					assertThat(ex.attempts()).isEqualTo(3);
					assertThat(ex.status()).isEqualTo(412);
					assertThat(ex.mayHaveBeenApplied()).isFalse();
					assertThat(ex.getMessage()).contains("update of k", "3 conditional writes");
				});
			assertThat(node.conditionalWrites()).isEqualTo(3);
			assertThat(node.value("k")).hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("a")));
		}
	}

	@Test
	void aNodeWithoutConditionalWritesIsNamedAndNothingIsRetried() {
		try (StubNode node = StubNode.start(StubNode.Mode.UNSUPPORTED);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(node.url().toString())
					.retryPolicy(RetryPolicy.DEFAULT.withRetryWrites(true))
					.build()) {
			client.blocking().put("k", bytes("a"));
			assertThatExceptionOfType(UnsupportedByNodeException.class)
				.isThrownBy(() -> client.blocking().putIf("k", bytes("b"), 1))
				.satisfies((ex) -> {
					assertThat(ex.node()).contains(node.url());
					assertThat(ex.status()).isEqualTo(501);
					assertThat(ex.mayHaveBeenApplied()).isFalse();
					assertThat(ex.attempts()).isEqualTo(1);
					assertThat(ex.getMessage()).contains(node.url().toString(), "does not support",
							"conditional writes are not supported yet");
				});
			assertThatExceptionOfType(UnsupportedByNodeException.class)
				.isThrownBy(() -> client.blocking().update("k", (current) -> concat(current, "+")));
			assertThatExceptionOfType(UnsupportedByNodeException.class)
				.isThrownBy(() -> client.blocking().deleteIf("k", 1));
			assertThat(node.conditionalWrites()).isEqualTo(3);
			assertThat(node.value("k")).hasValueSatisfying((value) -> assertThat(value).isEqualTo(bytes("a")));
		}
	}

	@Test
	void aConditionalWriteWithoutAnAnswerIsNotSentAgainEvenWhenWritesAreRetried() {
		try (StubNode node = StubNode.start(StubNode.Mode.SILENT);
				QuorumKvClient client = QuorumKvClient.builder()
					.seeds(node.url().toString())
					.responseTimeout(Duration.ofMillis(500))
					.retryPolicy(RetryPolicy.DEFAULT.withRetryWrites(true))
					.build()) {
			assertThatExceptionOfType(RequestOutcomeUnknownException.class)
				.isThrownBy(() -> client.putIfAbsent("k", bytes("a")).block(WAIT))
				.satisfies((ex) -> assertThat(ex.attempts()).isEqualTo(1));
			assertThat(node.conditionalWrites()).isEqualTo(1);
		}
	}

	private static QuorumKvClient client(StubNode node) {
		return QuorumKvClient.builder().seeds(node.url().toString()).build();
	}

	private static byte[] increment(Optional<byte[]> current) {
		return ByteBuffer.allocate(Long.BYTES)
			.putLong(current.map(ConditionalWritesTest::count).orElse(0L) + 1)
			.array();
	}

	private static long count(byte[] value) {
		return ByteBuffer.wrap(value).getLong();
	}

	private static byte[] concat(Optional<byte[]> current, String suffix) {
		return (current.map((value) -> new String(value, StandardCharsets.UTF_8)).orElse("") + suffix)
			.getBytes(StandardCharsets.UTF_8);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
