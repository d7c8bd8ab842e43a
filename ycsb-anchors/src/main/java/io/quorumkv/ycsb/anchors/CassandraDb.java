package io.quorumkv.ycsb.anchors;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
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
 * YCSB's {@code DB} over Apache Cassandra's Java driver, as QuorumKV's binding is over
 * its client: a record is one {@code blob} encoded by {@link FieldCodec} in a table
 * {@code (key text PRIMARY KEY, value blob)}, keyed {@code table/key} like QuorumKV's;
 * every statement is prepared once and runs at {@code QUORUM} (reads and writes, so with
 * RF 3 a read sees every acknowledged write, as QuorumKV's 2/3). An update reads, merges
 * and writes the record. A scan reads {@code recordcount} rows from the start key's token
 * on ({@code token(key) >= token(?)}, as YCSB's own Cassandra binding does): Cassandra
 * orders by token, not by key.
 *
 * <p>
 * The first {@code init} creates the keyspace ({@code SimpleStrategy}, replication factor
 * {@value #RF_DEFAULT} unless {@code cassandra.replication-factor} says otherwise) and
 * the table if missing. Properties: {@code cassandra.hosts} (default
 * {@code 127.0.0.1,127.0.0.2,127.0.0.3}), {@code cassandra.port} (9042),
 * {@code cassandra.datacenter} ({@code datacenter1}), {@code cassandra.keyspace}
 * ({@code ycsb}), {@code cassandra.consistency} ({@code QUORUM}),
 * {@code cassandra.connections-per-node} (1: the driver multiplexes),
 * {@code cassandra.request-timeout-ms} (5000) and {@value #CONDITIONAL_UPDATE}
 * ({@code true} or {@code false} in any case, default {@code false}; anything else fails
 * {@code init}).
 *
 * <p>
 * With {@value #CONDITIONAL_UPDATE}{@code =true} an update is a compare-and-set through
 * Cassandra's lightweight transactions (Paxos among the key's replicas), as QuorumKV's
 * {@code quorumkv.conditional-update} is through its per-key consensus: read the record
 * (at the configured consistency), merge, then
 * {@code UPDATE ... SET value = ? WHERE key = ? IF value = ?} (the bytes read) or, when
 * absent, {@code INSERT ... IF NOT EXISTS}, with {@code SERIAL} consistency for the
 * condition and {@code QUORUM} for the commit. When {@code [applied]} is false another
 * writer came between, and the update starts again after a jittered wait, up to ten
 * rounds ({@link CasRetry}, the QuorumKV client's policy). The last {@code cleanup}
 * prints the run's {@link CasCounts} to standard error.
 */
public final class CassandraDb extends DB {

	static final int RF_DEFAULT = 3;

	public static final String CONDITIONAL_UPDATE = "cassandra.conditional-update";

	private static final CasCounts COUNTS = new CasCounts();

	private static final CasRetry RETRY = CasRetry.standard(COUNTS);

	private static final Shared<CqlSession> SESSION = new Shared<>();

	private static final Map<String, Statements> STATEMENTS = new ConcurrentHashMap<>();

	private @Nullable CqlSession session;

	private String keyspace = "ycsb";

	private boolean conditionalUpdate;

	@Override
	public void init() throws DBException {
		this.keyspace = getProperties().getProperty("cassandra.keyspace", "ycsb");
		try {
			this.conditionalUpdate = Flags.parse(getProperties().getProperty(CONDITIONAL_UPDATE), CONDITIONAL_UPDATE);
		}
		catch (IllegalArgumentException ex) {
			throw new DBException(ex.getMessage(), ex);
		}
		try {
			this.session = SESSION.acquire(() -> open(getProperties(), this.keyspace));
		}
		catch (RuntimeException ex) {
			throw new DBException("cannot connect to Cassandra: " + ex, ex);
		}
	}

	@Override
	public void cleanup() {
		if (this.session != null) {
			this.session = null;
			boolean conditional = this.conditionalUpdate;
			SESSION.release((session) -> {
				STATEMENTS.clear();
				session.close();
				if (conditional) {
					System.err.println(COUNTS.line("cassandra"));
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
		catch (RuntimeException ex) {
			return Failures.failed("cassandra", "read", ex);
		}
	}

	@Override
	public Status scan(String table, String startkey, int recordcount, @Nullable Set<String> fields,
			Vector<HashMap<String, ByteIterator>> result) {
		try {
			for (Row row : session().execute(statements(table).scan.bind(table + "/" + startkey, recordcount))) {
				HashMap<String, ByteIterator> record = new HashMap<>();
				FieldCodec.copyInto(FieldCodec.decode(bytes(row.getByteBuffer(0))), fields, record);
				result.add(record);
			}
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return Failures.failed("cassandra", "scan", ex);
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
			return Failures.failed("cassandra", "update", ex);
		}
	}

	@Override
	public Status insert(String table, String key, Map<String, ByteIterator> values) {
		try {
			put(table, key, FieldCodec.encode(values));
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return Failures.failed("cassandra", "insert", ex);
		}
	}

	@Override
	public Status delete(String table, String key) {
		try {
			session().execute(statements(table).delete.bind(table + "/" + key));
			return Status.OK;
		}
		catch (RuntimeException ex) {
			return Failures.failed("cassandra", "delete", ex);
		}
	}

	/** One round of a conditional update: true when its write was applied. */
	private boolean compareAndSet(String table, String key, Map<String, byte[]> fields) {
		byte @Nullable [] current = get(table, key);
		ByteBuffer next = ByteBuffer.wrap(FieldCodec.mergeBytes(current, fields));
		Statements statements = statements(table);
		BoundStatement write = (current != null)
				? statements.updateIf.bind(next, table + "/" + key, ByteBuffer.wrap(current))
				: statements.insertIfAbsent.bind(table + "/" + key, next);
		return session()
			.execute(write.setSerialConsistencyLevel(DefaultConsistencyLevel.SERIAL)
				.setConsistencyLevel(DefaultConsistencyLevel.QUORUM))
			.wasApplied();
	}

	private byte @Nullable [] get(String table, String key) {
		Row row = session().execute(statements(table).read.bind(table + "/" + key)).one();
		return (row != null) ? bytes(row.getByteBuffer(0)) : null;
	}

	private void put(String table, String key, byte[] value) {
		session().execute(statements(table).insert.bind(table + "/" + key, ByteBuffer.wrap(value)));
	}

	private CqlSession session() {
		CqlSession current = this.session;
		if (current == null) {
			throw new IllegalStateException("init() was not called");
		}
		return current;
	}

	private Statements statements(String table) {
		return STATEMENTS.computeIfAbsent(table, (name) -> Statements.prepare(session(), this.keyspace, name));
	}

	private static byte[] bytes(@Nullable ByteBuffer buffer) {
		if (buffer == null) {
			return new byte[0];
		}
		byte[] bytes = new byte[buffer.remaining()];
		buffer.duplicate().get(bytes);
		return bytes;
	}

	private static CqlSession open(java.util.Properties properties, String keyspace) {
		int port = Integer.parseInt(properties.getProperty("cassandra.port", "9042"));
		List<InetSocketAddress> contacts = new ArrayList<>();
		for (String host : properties.getProperty("cassandra.hosts", "127.0.0.1,127.0.0.2,127.0.0.3").split(",")) {
			contacts.add(new InetSocketAddress(host.strip(), port));
		}
		long timeoutMs = Long.parseLong(properties.getProperty("cassandra.request-timeout-ms", "5000"));
		DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
			.withString(DefaultDriverOption.REQUEST_CONSISTENCY,
					DefaultConsistencyLevel.valueOf(properties.getProperty("cassandra.consistency", "QUORUM")).name())
			.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofMillis(timeoutMs))
			.withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
			.withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(30))
			.withInt(DefaultDriverOption.CONNECTION_POOL_LOCAL_SIZE,
					Integer.parseInt(properties.getProperty("cassandra.connections-per-node", "1")))
			.build();
		CqlSession session = CqlSession.builder()
			.addContactPoints(contacts)
			.withLocalDatacenter(properties.getProperty("cassandra.datacenter", "datacenter1"))
			.withConfigLoader(config)
			.build();
		int rf = Integer.parseInt(properties.getProperty("cassandra.replication-factor", Integer.toString(RF_DEFAULT)));
		session.execute("CREATE KEYSPACE IF NOT EXISTS " + keyspace
				+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': " + rf + "}");
		return session;
	}

	/** The prepared statements of one table, made once per run. */
	private record Statements(PreparedStatement read, PreparedStatement insert, PreparedStatement delete,
			PreparedStatement scan, PreparedStatement updateIf, PreparedStatement insertIfAbsent) {

		static Statements prepare(CqlSession session, String keyspace, String table) {
			String name = keyspace + "." + table;
			session.execute("CREATE TABLE IF NOT EXISTS " + name + " (key text PRIMARY KEY, value blob)");
			return new Statements(session.prepare("SELECT value FROM " + name + " WHERE key = ?"),
					session.prepare("INSERT INTO " + name + " (key, value) VALUES (?, ?)"),
					session.prepare("DELETE FROM " + name + " WHERE key = ?"),
					session.prepare("SELECT value FROM " + name + " WHERE token(key) >= token(?) LIMIT ?"),
					session.prepare("UPDATE " + name + " SET value = ? WHERE key = ? IF value = ?"),
					session.prepare("INSERT INTO " + name + " (key, value) VALUES (?, ?) IF NOT EXISTS"));
		}

	}

}
