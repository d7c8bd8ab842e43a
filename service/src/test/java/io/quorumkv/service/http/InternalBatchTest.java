package io.quorumkv.service.http;

import io.quorumkv.service.replication.InternalApi;
import reactor.core.publisher.Flux;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.quorumkv.service.cluster.ClockGuard;
import io.quorumkv.service.cluster.HybridLogicalClock;
import io.quorumkv.service.config.QuorumKvProperties;
import io.quorumkv.service.replication.BatchCodec;
import io.quorumkv.service.replication.BatchCodec.Operation;
import io.quorumkv.service.replication.BatchCodec.Result;
import io.quorumkv.storage.Entry;
import io.quorumkv.storage.Storage;
import io.quorumkv.storage.StorageException;
import io.quorumkv.storage.contract.ModelStorage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * A replica's side of a batch call ({@link InternalHandler#batch(RequestBody)}): its
 * writes go to the storage together, through {@link Storage#upsertAll}, before its reads.
 */
class InternalBatchTest {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final int MAX_KEY = 1024;

	private final ModelStorage model = ModelStorage.inMemory();

	private final List<List<Entry>> upsertAlls = new ArrayList<>();

	private RuntimeException failWrites;

	/** The model, recording each upsertAll and failing it when told to. */
	private final Storage storage = new Storage() {

		@Override
		public Mono<Entry> get(byte[] key) {
			return InternalBatchTest.this.model.get(key);
		}

		@Override
		public Mono<Void> upsert(Entry entry) {
			return InternalBatchTest.this.model.upsert(entry);
		}

		@Override
		public Mono<Void> upsertAll(List<Entry> entries) {
			InternalBatchTest.this.upsertAlls.add(List.copyOf(entries));
			RuntimeException failure = InternalBatchTest.this.failWrites;
			return (failure != null) ? Mono.error(failure) : InternalBatchTest.this.model.upsertAll(entries);
		}

		@Override
		public reactor.core.publisher.Flux<Entry> scan(byte[] from, byte[] to) {
			return InternalBatchTest.this.model.scan(from, to);
		}

		@Override
		public Mono<Void> flush() {
			return Mono.empty();
		}

		@Override
		public io.quorumkv.storage.StorageStats stats() {
			return InternalBatchTest.this.model.stats();
		}

		@Override
		public void close() {
		}

	};

	private final InternalHandler handler = new InternalHandler(this.storage,
			new ClockGuard(HybridLogicalClock.inMemory(Clock.systemUTC(), Duration.ofMillis(500)),
					new SimpleMeterRegistry()),
			new BodyBudget(1 << 20, new SimpleMeterRegistry()), new Binder(new MapConfigurationPropertySource(Map.of()))
				.bindOrCreate("quorumkv", QuorumKvProperties.class));

	@AfterEach
	void close() {
		this.model.close();
	}

	private List<Result> run(List<Operation> operations) {
		byte[] body = BatchCodec.encodeRequest(operations);
		ServerRequest request = ServerRequest.create(
				MockServerWebExchange.from(MockServerHttpRequest.post(InternalApi.BATCH_PATH)
					.body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)))),
				HandlerStrategies.withDefaults().messageReaders());
		ServerResponse response = this.handler.batch(request).block(TIMEOUT);
		assertThat(response).isInstanceOf(Reply.class);
		Reply reply = (Reply) response;
		assertThat(reply.statusCode().value()).isEqualTo(200);
		return BatchCodec.decodeResponse(reply.body(), operations, MAX_KEY);
	}

	private static byte[] key(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void theWritesOfABatchGoToTheStorageInOneUpsertAllBeforeItsReads() {
		Entry a = Entry.value(key("a"), key("1"), 10);
		Entry b = Entry.tombstone(key("b"), 11);
		this.model.upsert(Entry.value(key("c"), key("kept"), 5)).block(TIMEOUT);
		List<Result> results = run(List.of(Operation.get(key("a")), Operation.upsert(a), Operation.get(key("c")),
				Operation.upsert(b), Operation.get(key("never"))));
		assertThat(this.upsertAlls).containsExactly(List.of(a, b));
		assertThat(results).hasSize(5);
		// The read of "a" comes before its write in the batch, and still sees it.
		assertThat(results.get(0).entry()).isEqualTo(a);
		assertThat(results.get(1)).isEqualTo(Result.KEPT);
		assertThat(results.get(2).entry()).isEqualTo(Entry.value(key("c"), key("kept"), 5));
		assertThat(results.get(3)).isEqualTo(Result.KEPT);
		assertThat(results.get(4)).isEqualTo(Result.ABSENT);
		assertThat(this.model.get(key("b")).block(TIMEOUT)).isEqualTo(b);
	}

	@Test
	void aBatchOfReadsOnlyWritesNothing() {
		List<Result> results = run(List.of(Operation.get(key("x"))));
		assertThat(results).containsExactly(Result.ABSENT);
		assertThat(this.upsertAlls).isEmpty();
	}

	@Test
	void aFailedWriteFailsEveryWriteOfTheBatchAndNoRead() {
		this.failWrites = new StorageException("disk full");
		this.model.upsert(Entry.value(key("r"), key("v"), 1)).block(TIMEOUT);
		List<Result> results = run(List.of(Operation.upsert(Entry.value(key("a"), key("1"), 10)),
				Operation.get(key("r")), Operation.upsert(Entry.value(key("b"), key("2"), 10))));
		assertThat(results.get(0).isFailure()).isTrue();
		assertThat(results.get(0).failure()).isEqualTo("StorageException: disk full");
		assertThat(results.get(1).entry()).isEqualTo(Entry.value(key("r"), key("v"), 1));
		assertThat(results.get(2).isFailure()).isTrue();
	}

	/** Far ahead of the model's system clock: the entries do not expire during a test. */
	private static final long LATER = 4_000_000_000_000_000L;

	@Test
	void expiriesTravelInBatchFrames() {
		Entry lease = Entry.expiring(key("l"), key("v"), 10, LATER);
		List<Result> results = run(List.of(Operation.upsert(lease), Operation.get(key("l"))));
		assertThat(this.upsertAlls).containsExactly(List.of(lease));
		assertThat(results.get(1).entry()).isEqualTo(lease);
	}

	private ServerRequest single(MockServerHttpRequest.BodyBuilder request, byte[] body) {
		return ServerRequest.create(
				MockServerWebExchange.from(request.body(Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)))),
				HandlerStrategies.withDefaults().messageReaders());
	}

	@Test
	void expiriesTravelInSingleEntryCallsAsAHeader() {
		ServerResponse put = this.handler
			.put(single(MockServerHttpRequest.put(InternalApi.ENTRY_PATH + "?id=s")
				.header(InternalApi.TIMESTAMP, "7")
				.header(InternalApi.TOMBSTONE, "false")
				.header(InternalApi.EXPIRES_AT, Long.toString(LATER)), key("value")))
			.block(TIMEOUT);
		assertThat(put.statusCode().value()).isEqualTo(201);
		assertThat(this.model.find(key("s"))).isEqualTo(Entry.expiring(key("s"), key("value"), 7, LATER));
		ServerResponse get = this.handler
			.get(single(MockServerHttpRequest.method(org.springframework.http.HttpMethod.GET,
					java.net.URI.create(InternalApi.ENTRY_PATH + "?id=s")), new byte[0]))
			.block(TIMEOUT);
		assertThat(get.headers().getFirst(InternalApi.EXPIRES_AT)).isEqualTo(Long.toString(LATER));
		this.model.upsert(Entry.value(key("p"), key("plain"), 3)).block(TIMEOUT);
		ServerResponse plain = this.handler
			.get(single(MockServerHttpRequest.method(org.springframework.http.HttpMethod.GET,
					java.net.URI.create(InternalApi.ENTRY_PATH + "?id=p")), new byte[0]))
			.block(TIMEOUT);
		assertThat(plain.headers().containsHeader(InternalApi.EXPIRES_AT)).isFalse();
		ServerResponse expiringTombstone = this.handler
			.put(single(MockServerHttpRequest.put(InternalApi.ENTRY_PATH + "?id=t")
				.header(InternalApi.TIMESTAMP, "7")
				.header(InternalApi.TOMBSTONE, "true")
				.header(InternalApi.EXPIRES_AT, "9"), new byte[0]))
			.block(TIMEOUT);
		assertThat(expiringTombstone.statusCode().value()).isEqualTo(400);
		ServerResponse badExpiry = this.handler
			.put(single(MockServerHttpRequest.put(InternalApi.ENTRY_PATH + "?id=t")
				.header(InternalApi.TIMESTAMP, "7")
				.header(InternalApi.EXPIRES_AT, "soon"), new byte[0]))
			.block(TIMEOUT);
		assertThat(badExpiry.statusCode().value()).isEqualTo(400);
		assertThat(this.model.find(key("t"))).isNull();
	}

}
