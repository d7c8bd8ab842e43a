package io.quorumkv.ycsb.anchors;

import java.util.Properties;

import org.junit.jupiter.api.Test;
import site.ycsb.DB;
import site.ycsb.DBException;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The anchors' {@code conditional-update} flags are read as QuorumKV's is
 * ({@code io.quorumkv.ycsb.Flags}, tested in module ycsb): a value other than true or
 * false stops the binding at {@code init}, before it connects to anything (no store runs
 * here: a binding that connected first would fail with another message).
 */
class ConditionalUpdateFlagTest {

	@Test
	void cassandraRefusesABadFlagAtInit() {
		assertThatExceptionOfType(DBException.class)
			.isThrownBy(() -> init(new CassandraDb(), CassandraDb.CONDITIONAL_UPDATE, "yes"))
			.withMessage(CassandraDb.CONDITIONAL_UPDATE + " must be true or false, not yes");
	}

	@Test
	void etcdRefusesABadFlagAtInit() {
		assertThatExceptionOfType(DBException.class)
			.isThrownBy(() -> init(new EtcdDb(), EtcdDb.CONDITIONAL_UPDATE, "1"))
			.withMessage(EtcdDb.CONDITIONAL_UPDATE + " must be true or false, not 1");
	}

	private static void init(DB db, String name, String value) throws DBException {
		Properties properties = new Properties();
		properties.setProperty(name, value);
		// an address no store listens on: an init that got past the flag would fail to
		// connect
		properties.setProperty("cassandra.hosts", "127.0.0.1");
		properties.setProperty("cassandra.port", "1");
		properties.setProperty("etcd.endpoints", "http://127.0.0.1:1");
		db.setProperties(properties);
		db.init();
	}

}
