package io.quorumkv.ycsb.anchors;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.quorumkv.ycsb.CasCounts;
import io.quorumkv.ycsb.CasRetry;
import io.quorumkv.ycsb.FieldCodec;
import io.quorumkv.ycsb.Flags;
import org.jspecify.annotations.Nullable;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's {@code DB} over etcd's v3 API through jetcd, as QuorumKV's binding is over its
 * client: a record is one value encoded by {@link FieldCodec} under the key
 * {@code table/key}; an update reads, merges and writes; a scan is one range read of
 * {@code recordcount} keys from the start key, sorted by key, within the table. Reads are
 * etcd's default, linearizable (they go through the Raft leader's read index), and every
 * write is committed to a majority's fsynced Raft log before it is answered.
 *
 * <p>
 * Properties: {@code etcd.endpoints} (default
 * {@code http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379}, the
 * members of {@code scripts/anchors/etcd.sh}), {@code etcd.request-timeout-ms} (5000) and
 * {@value #CONDITIONAL_UPDATE} ({@code true} or {@code false} in any case, default
 * {@code false}; anything else fails {@code init}).
 *
 * <p>
 * With {@value #CONDITIONAL_UPDATE}{@code =true} an update is a compare-and-set, as
 * QuorumKV's {@code quorumkv.conditional-update} is: read the record with its
 * {@code mod_revision}, merge, then one transaction that puts the result if the key's
 * {@code mod_revision} is still the one read ({@code version == 0} when it was absent).
 * When the comparison fails another writer came between, and the update starts again
 * after a jittered wait, up to ten rounds ({@link CasRetry}, the QuorumKV client's
 * policy). The last {@code cleanup} prints the run's {@link CasCounts} to standard error.
 */
public final class EtcdDb extends DB {

	public static final String CONDITIONAL_UPDATE = "etcd.conditional-update";

	private static final Shared<Client> CLIENT = new Shared<>();

	private static final CasCounts COUNTS = new CasCounts();

	private static final CasRetry RETRY = CasRetry.standard(COUNTS);

	private @Nullable KV kv;

	private long timeoutMs = 5000;

	private boolean conditionalUpdate;

	@Override
	public void init() throws DBException {
		try {
			this.conditionalUpdate = Flags.parse(getProperties().getProperty(CONDITIONAL_UPDATE), CONDITIONAL_UPDATE);
		}
		catch (IllegalArgumentException ex) {
			throw new DBException(ex.getMessage(), ex);
		}
		this.timeoutMs = Long.parseLong(getProperties().getProperty("etcd.request-timeout-ms", "5000"));
		String endpoints = getProperties().getProperty("etcd.endpoints",
				"http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379");
		try {
			this.kv = CLIENT.acquire(() -> Client.builder().endpoints(endpoints.split(",")).build()).getKVClient();
		}
		catch (RuntimeException ex) {
			throw new DBException("cannot start the etcd client: " + ex, ex);
		}
	}

	@Override
	public void cleanup() {
		if (this.kv != null) {
			this.kv = null;
			boolean conditional = this.conditionalUpdate;
			CLIENT.release((client) -> {
				client.close();
				if (conditional) {
					System.err.println(COUNTS.line("etcd"));
				}
			});
		}
	}

	@Override
	public Status read(String table, String key, @Nullable Set<String> fields, Map<String, ByteIterator> result) {
		try {
			byte @Nullable [] value = get(table, key);
			if (value == null) {
				return Status.NOT_FOUND;
			}
			FieldCodec.copyInto(FieldCodec.decode(value), fields, result);
			return Status.OK;
		}
		catch (Exception ex) {
			return Failures.failed("etcd", "read", ex);
		}
	}

	@Override
	public Status scan(String table, String startkey, int recordcount, @Nullable Set<String> fields,
			Vector<HashMap<String, ByteIterator>> result) {
		try {
			GetOption range = GetOption.builder()
				.withRange(bytes(table + "0"))
				.withLimit(recordcount)
				.withSortField(GetOption.SortTarget.KEY)
				.withSortOrder(GetOption.SortOrder.ASCEND)
				.build();
			GetResponse response = await(kv().get(bytes(table + "/" + startkey), range));
			for (KeyValue entry : response.getKvs()) {
				HashMap<String, ByteIterator> record = new HashMap<>();
				FieldCodec.copyInto(FieldCodec.decode(entry.getValue().getBytes()), fields, record);
				result.add(record);
			}
			return Status.OK;
		}
		catch (Exception ex) {
			return Failures.failed("etcd", "scan", ex);
		}
	}

	@Override
	public Status update(String table, String key, Map<String, ByteIterator> values) {
		try {
			if (this.conditionalUpdate) {
				Map<String, byte[]> fields = FieldCodec.bytesOf(values);
				RETRY.run(() -> compareAndSet(table, key, fields));
			}
			else {
				put(table, key, FieldCodec.merge(get(table, key), values));
			}
			return Status.OK;
		}
		catch (Exception ex) {
			return Failures.failed("etcd", "update", ex);
		}
	}

	@Override
	public Status insert(String table, String key, Map<String, ByteIterator> values) {
		try {
			put(table, key, FieldCodec.encode(values));
			return Status.OK;
		}
		catch (Exception ex) {
			return Failures.failed("etcd", "insert", ex);
		}
	}

	@Override
	public Status delete(String table, String key) {
		try {
			await(kv().delete(bytes(table + "/" + key)));
			return Status.OK;
		}
		catch (Exception ex) {
			return Failures.failed("etcd", "delete", ex);
		}
	}

	/** One round of a conditional update: true when its transaction's comparison held. */
	private boolean compareAndSet(String table, String key, Map<String, byte[]> fields)
			throws InterruptedException, ExecutionException, TimeoutException {
		ByteSequence recordKey = bytes(table + "/" + key);
		GetResponse read = await(kv().get(recordKey));
		@Nullable KeyValue current = read.getKvs().isEmpty() ? null : read.getKvs().get(0);
		byte[] next = FieldCodec.mergeBytes((current != null) ? current.getValue().getBytes() : null, fields);
		Cmp unchanged = (current != null)
				? new Cmp(recordKey, Cmp.Op.EQUAL, CmpTarget.modRevision(current.getModRevision()))
				: new Cmp(recordKey, Cmp.Op.EQUAL, CmpTarget.version(0));
		return await(
				kv().txn().If(unchanged).Then(Op.put(recordKey, ByteSequence.from(next), PutOption.DEFAULT)).commit())
			.isSucceeded();
	}

	private byte @Nullable [] get(String table, String key)
			throws InterruptedException, ExecutionException, TimeoutException {
		GetResponse response = await(kv().get(bytes(table + "/" + key)));
		return response.getKvs().isEmpty() ? null : response.getKvs().get(0).getValue().getBytes();
	}

	private void put(String table, String key, byte[] value)
			throws InterruptedException, ExecutionException, TimeoutException {
		await(kv().put(bytes(table + "/" + key), ByteSequence.from(value)));
	}

	private <T> T await(java.util.concurrent.CompletableFuture<T> future)
			throws InterruptedException, ExecutionException, TimeoutException {
		return future.get(this.timeoutMs, TimeUnit.MILLISECONDS);
	}

	private KV kv() {
		KV current = this.kv;
		if (current == null) {
			throw new IllegalStateException("init() was not called");
		}
		return current;
	}

	private static ByteSequence bytes(String text) {
		return ByteSequence.from(text, StandardCharsets.UTF_8);
	}

}
