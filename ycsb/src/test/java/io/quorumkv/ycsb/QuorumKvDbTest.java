package io.quorumkv.ycsb;

import java.io.IOException;
import java.net.URI;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.stream.Collectors;

import io.quorumkv.client.TestNodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** The binding against three real nodes at 2/3, as YCSB drives it. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QuorumKvDbTest {

	private TestNodes nodes;

	private DB db;

	@BeforeAll
	void start() throws IOException, DBException {
		this.nodes = TestNodes.start(3, Map.of());
		this.db = open(Map.of(QuorumKvDb.REPLICAS, "2/3"));
	}

	@AfterAll
	void stop() throws IOException, DBException {
		if (this.db != null) {
			this.db.cleanup();
		}
		if (this.nodes != null) {
			this.nodes.close();
		}
	}

	private DB open(Map<String, String> extra) throws DBException {
		Properties properties = new Properties();
		properties.setProperty(QuorumKvDb.SEEDS,
				this.nodes.urls().stream().map(URI::toString).collect(Collectors.joining(",")));
		properties.setProperty("threadcount", "2");
		extra.forEach(properties::setProperty);
		DB db = new QuorumKvDb();
		db.setProperties(properties);
		db.init();
		return db;
	}

	@Test
	void insertReadUpdateDelete() {
		assertThat(this.db.insert("usertable", "user1", fields("field0", "a\n\0", "field1", "b"))).isEqualTo(Status.OK);
		Map<String, ByteIterator> all = new HashMap<>();
		assertThat(this.db.read("usertable", "user1", null, all)).isEqualTo(Status.OK);
		assertThat(strings(all)).containsExactlyInAnyOrderEntriesOf(Map.of("field0", "a\n\0", "field1", "b"));

		assertThat(this.db.update("usertable", "user1", fields("field1", "B", "field2", "c"))).isEqualTo(Status.OK);
		Map<String, ByteIterator> some = new HashMap<>();
		assertThat(this.db.read("usertable", "user1", Set.of("field0", "field1", "field2"), some)).isEqualTo(Status.OK);
		assertThat(strings(some))
			.containsExactlyInAnyOrderEntriesOf(Map.of("field0", "a\n\0", "field1", "B", "field2", "c"));
		Map<String, ByteIterator> one = new HashMap<>();
		assertThat(this.db.read("usertable", "user1", Set.of("field2"), one)).isEqualTo(Status.OK);
		assertThat(strings(one)).containsOnlyKeys("field2");

		assertThat(this.db.delete("usertable", "user1")).isEqualTo(Status.OK);
		assertThat(this.db.read("usertable", "user1", null, new HashMap<>())).isEqualTo(Status.NOT_FOUND);
	}

	@Test
	void scanReadsRecordsInKeyOrderWithinTheTable() {
		for (int i = 0; i < 5; i++) {
			assertThat(this.db.insert("scantable", "user" + i, fields("field0", "v" + i))).isEqualTo(Status.OK);
		}
		assertThat(this.db.insert("scantable0", "user9", fields("field0", "other table"))).isEqualTo(Status.OK);
		Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
		assertThat(this.db.scan("scantable", "user1", 3, null, rows)).isEqualTo(Status.OK);
		assertThat(rows).extracting((row) -> row.get("field0").toString()).containsExactly("v1", "v2", "v3");
		Vector<HashMap<String, ByteIterator>> rest = new Vector<>();
		assertThat(this.db.scan("scantable", "user3", 100, null, rest)).isEqualTo(Status.OK);
		assertThat(rest).extracting((row) -> row.get("field0").toString()).containsExactly("v3", "v4");
	}

	@Test
	void badSettingsAndBadAnswersAreReported() throws DBException {
		assertThatExceptionOfType(DBException.class).isThrownBy(() -> open(Map.of(QuorumKvDb.REPLICAS, "4")));
		DB tooMany = open(Map.of(QuorumKvDb.REPLICAS, "2/5"));
		try {
			assertThat(tooMany.insert("usertable", "x", fields("f", "v"))).isEqualTo(Status.ERROR);
		}
		finally {
			tooMany.cleanup();
		}
	}

	private static Map<String, ByteIterator> fields(String... namesAndValues) {
		Map<String, ByteIterator> fields = new HashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			fields.put(namesAndValues[i], new StringByteIterator(namesAndValues[i + 1]));
		}
		return fields;
	}

	private static Map<String, String> strings(Map<String, ByteIterator> fields) {
		Map<String, String> strings = new HashMap<>();
		fields.forEach((name, value) -> strings.put(name, value.toString()));
		return strings;
	}

}
