package io.quorumkv.service;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.netty.ReactorNetty;

/** The launcher's default of one event loop per core, and an operator's own setting. */
class QuorumKvApplicationTest {

	private String saved;

	@BeforeEach
	void save() {
		this.saved = System.clearProperty(ReactorNetty.IO_WORKER_COUNT);
	}

	@AfterEach
	void restore() {
		if (this.saved != null) {
			System.setProperty(ReactorNetty.IO_WORKER_COUNT, this.saved);
		}
		else {
			System.clearProperty(ReactorNetty.IO_WORKER_COUNT);
		}
	}

	@Test
	void oneEventLoopPerCoreByDefault() {
		QuorumKvApplication.defaultEventLoops(2);
		assertThat(System.getProperty(ReactorNetty.IO_WORKER_COUNT)).isEqualTo("2");
	}

	@Test
	void atLeastOneLoop() {
		QuorumKvApplication.defaultEventLoops(0);
		assertThat(System.getProperty(ReactorNetty.IO_WORKER_COUNT)).isEqualTo("1");
	}

	@Test
	void anOperatorsSettingIsKept() {
		System.setProperty(ReactorNetty.IO_WORKER_COUNT, "6");
		QuorumKvApplication.defaultEventLoops(2);
		assertThat(System.getProperty(ReactorNetty.IO_WORKER_COUNT)).isEqualTo("6");
	}

}
