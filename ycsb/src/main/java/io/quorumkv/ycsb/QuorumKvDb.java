package io.quorumkv.ycsb;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicInteger;

import io.quorumkv.client.BlockingQuorumKvClient;
import io.quorumkv.client.KeyValue;
import io.quorumkv.client.QuorumKvException;
import io.quorumkv.client.Replicas;
import io.quorumkv.client.ServiceUnavailableException;
import io.quorumkv.client.UpdateConflictException;
import org.jspecify.annotations.Nullable;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's {@code DB} over the QuorumKV client (its blocking facade: YCSB's client threads
 * each wait for their operation, as YCSB expects).
 *
 * <pre>
 * java -cp ycsb/target/ycsb.jar:ycsb/target/lib/* site.ycsb.Client -t \
 *     -db io.quorumkv.ycsb.QuorumKvDb -P scripts/ycsb/workloads/workloada \
 *     -p quorumkv.seeds=http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083 \
 *     -p quorumkv.replicas=2/3 -threads 16
 * </pre>
 *
 * <ul>
 * <li>A record is one value, its fields encoded by {@link FieldCodec}; its key is
 * {@code table/key}, so that a scan of one table stays within it.</li>
 * <li>{@code read} reads the value and returns the fields asked for.</li>
 * <li>{@code insert} writes the whole record.</li>
 * <li>{@code update} merges, as YCSB's other key-value bindings do: it reads the record,
 * writes the given fields over it and writes it back (two requests). By default the merge
 * is not atomic: two updates of different fields of one record at once can lose one of
 * them (last-write-wins on the whole value), and an update's latency includes a read.
 * With {@value #CONDITIONAL_UPDATE}{@code =true} it is the client's {@code update}: the
 * write is conditional on the version read ({@code If-Match}) and the read, merge and
 * write start again when another writer came between, so no field is lost (workload F's
 * read-modify-write measures compare-and-set then). The record is then read and written
 * at the nodes' defaults ({@value #REPLICAS} does not apply to it).</li>
 * <li>{@code scan} streams {@code recordcount} records from the start key on, in key
 * order.</li>
 * <li>{@code delete} deletes the key.</li>
 * </ul>
 *
 * Properties: {@value #SEEDS} (comma-separated node URLs, default the three nodes of
 * {@code scripts/cluster.sh}), {@value #REPLICAS} ({@code ack/from} of every request,
 * default the nodes' own), {@value #CONNECTIONS} (per node, default YCSB's
 * {@code threadcount}), {@value #MAX_ATTEMPTS} (default 3), {@value #RESPONSE_TIMEOUT_MS}
 * (default 5000), {@value #CONDITIONAL_UPDATE} ({@code true} or {@code false}, default
 * {@code false}), {@value #ROUTING} ({@code replica-aware}, the default: each request to
 * a replica of its key, or {@code any-node}: the seeds in turn).
 *
 * <p>
 * With {@value #CONDITIONAL_UPDATE}, the last {@code cleanup} prints the run's
 * {@link CasCounts} (rounds, retries after a 412, updates that lost all ten rounds) to
 * standard error.
 */
public final class QuorumKvDb extends DB {

	public static final String SEEDS = "quorumkv.seeds";

	public static final String REPLICAS = "quorumkv.replicas";

	public static final String CONNECTIONS = "quorumkv.connections-per-node";

	public static final String MAX_ATTEMPTS = "quorumkv.max-attempts";

	public static final String RESPONSE_TIMEOUT_MS = "quorumkv.response-timeout-ms";

	public static final String CONDITIONAL_UPDATE = "quorumkv.conditional-update";

	public static final String ROUTING = "quorumkv.routing";

	static final String DEFAULT_SEEDS = "http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083";

	/** Failures printed per run, so that a failing run says why without flooding. */
	private static final int ERRORS_SHOWN = 10;

	private static final AtomicInteger ERRORS = new AtomicInteger();

	private static final CasCounts COUNTS = new CasCounts();

	private @Nullable BlockingQuorumKvClient kv;

	private @Nullable Replicas replicas;

	private boolean acquired;

	private boolean conditionalUpdate;

	@Override
	public void init() throws DBException {
		try {
			String replicasValue = getProperties().getProperty(REPLICAS, "").strip();
			this.replicas = replicasValue.isEmpty() ? null : parse(replicasValue);
			this.conditionalUpdate = Flags.parse(getProperties().getProperty(CONDITIONAL_UPDATE), CONDITIONAL_UPDATE);
			this.kv = SharedClient.acquire(getProperties()).blocking();
			this.acquired = true;
		}
		catch (RuntimeException ex) {
			throw new DBException("cannot start the QuorumKV client: " + ex.getMessage(), ex);
		}
	}

	@Override
	public void cleanup() {
		if (this.acquired) {
			this.acquired = false;
			if (SharedClient.release() && this.conditionalUpdate) {
				System.err.println(COUNTS.line("quorumkv"));
			}
		}
	}

	@Override
	public Status read(String table, String key, @Nullable Set<String> fields, Map<String, ByteIterator> result) {
		try {
			byte[] value = get(recordKey(table, key));
			if (value == null) {
				return Status.NOT_FOUND;
			}
			FieldCodec.copyInto(FieldCodec.decode(value), fields, result);
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return failed("read", ex);
		}
	}

	@Override
	public Status scan(String table, String startkey, int recordcount, @Nullable Set<String> fields,
			Vector<HashMap<String, ByteIterator>> result) {
		try {
			String prefix = table + "/";
			// '0' follows '/': the end of this table's keys.
			for (KeyValue record : client().scan(prefix + startkey, table + "0", recordcount)) {
				HashMap<String, ByteIterator> row = new HashMap<>();
				FieldCodec.copyInto(FieldCodec.decode(record.value()), fields, row);
				result.add(row);
			}
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return failed("scan", ex);
		}
	}

	@Override
	public Status update(String table, String key, Map<String, ByteIterator> values) {
		try {
			String recordKey = recordKey(table, key);
			if (this.conditionalUpdate) {
				conditionalUpdate(recordKey, values);
			}
			else {
				put(recordKey, FieldCodec.merge(get(recordKey), values));
			}
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return failed("update", ex);
		}
	}

	/**
	 * The client's {@code update}, which calls the merge once per round: the rounds are
	 * counted there.
	 */
	private void conditionalUpdate(String recordKey, Map<String, ByteIterator> values) {
		// the merge may run again: the fields are read out of YCSB's iterators once
		Map<String, byte[]> fields = FieldCodec.bytesOf(values);
		AtomicInteger rounds = new AtomicInteger();
		try {
			client().update(recordKey, (current) -> {
				rounds.incrementAndGet();
				return FieldCodec.mergeBytes(current.orElse(null), fields);
			});
		}
		catch (UpdateConflictException ex) {
			COUNTS.conflict(rounds.get());
			throw ex;
		}
		catch (RuntimeException ex) {
			COUNTS.failed(rounds.get());
			throw ex;
		}
		COUNTS.applied(rounds.get());
	}

	@Override
	public Status insert(String table, String key, Map<String, ByteIterator> values) {
		try {
			put(recordKey(table, key), FieldCodec.encode(values));
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return failed("insert", ex);
		}
	}

	@Override
	public Status delete(String table, String key) {
		try {
			if (this.replicas != null) {
				client().delete(recordKey(table, key), this.replicas);
			}
			else {
				client().delete(recordKey(table, key));
			}
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return failed("delete", ex);
		}
	}

	private byte @Nullable [] get(String key) {
		return ((this.replicas != null) ? client().get(key, this.replicas) : client().get(key)).orElse(null);
	}

	private void put(String key, byte[] value) {
		if (this.replicas != null) {
			client().put(key, value, this.replicas);
		}
		else {
			client().put(key, value);
		}
	}

	private BlockingQuorumKvClient client() {
		BlockingQuorumKvClient client = this.kv;
		if (client == null) {
			throw new IllegalStateException("init() was not called");
		}
		return client;
	}

	/** What this JVM's conditional updates came to so far. */
	static CasCounts counts() {
		return COUNTS;
	}

	static String recordKey(String table, String key) {
		return table + "/" + key;
	}

	static Replicas parse(String value) {
		int slash = value.indexOf('/');
		if (slash < 0) {
			throw new IllegalArgumentException(REPLICAS + " must be ack/from, not " + value);
		}
		return Replicas.of(Integer.parseInt(value.substring(0, slash).strip()),
				Integer.parseInt(value.substring(slash + 1).strip()));
	}

	private static Status failed(String operation, RuntimeException ex) {
		if (ERRORS.incrementAndGet() <= ERRORS_SHOWN) {
			System.err.println("quorumkv " + operation + " failed: " + ex);
		}
		if (ex instanceof ServiceUnavailableException) {
			return Status.SERVICE_UNAVAILABLE;
		}
		if (ex instanceof QuorumKvException) {
			return Status.ERROR;
		}
		return (ex instanceof IllegalArgumentException) ? Status.UNEXPECTED_STATE : Status.ERROR;
	}

}
