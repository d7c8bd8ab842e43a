package io.quorumkv.service;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.netty.ReactorNetty;

/**
 * The launcher's defaults (one event loop per core, Netty's leak detection off), and an
 * operator's own settings.
 */
class QuorumKvApplicationTest {

	private static final List<String> PROPERTIES = List.of(ReactorNetty.IO_WORKER_COUNT,
			QuorumKvApplication.LEAK_DETECTION_LEVEL, "io.netty.leakDetectionLevel");

	private final Map<String, String> saved = new HashMap<>();

	@BeforeEach
	void save() {
		for (String property : PROPERTIES) {
			String value = System.clearProperty(property);
			if (value != null) {
				this.saved.put(property, value);
			}
		}
	}

	@AfterEach
	void restore() {
		for (String property : PROPERTIES) {
			System.clearProperty(property);
		}
		this.saved.forEach(System::setProperty);
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

	@Test
	void leakDetectionIsOffByDefault() {
		QuorumKvApplication.defaultLeakDetection();
		assertThat(System.getProperty(QuorumKvApplication.LEAK_DETECTION_LEVEL)).isEqualTo("disabled");
	}

	@Test
	void anOperatorsLeakDetectionIsKeptUnderEitherName() {
		System.setProperty(QuorumKvApplication.LEAK_DETECTION_LEVEL, "paranoid");
		QuorumKvApplication.defaultLeakDetection();
		assertThat(System.getProperty(QuorumKvApplication.LEAK_DETECTION_LEVEL)).isEqualTo("paranoid");

		System.clearProperty(QuorumKvApplication.LEAK_DETECTION_LEVEL);
		System.setProperty("io.netty.leakDetectionLevel", "simple");
		QuorumKvApplication.defaultLeakDetection();
		assertThat(System.getProperty(QuorumKvApplication.LEAK_DETECTION_LEVEL)).isNull();
	}

}
