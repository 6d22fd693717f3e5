package dev.shardberg.router.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.shardberg.router.watch.ServerIdentity.Change;
import org.junit.jupiter.api.Test;

/** Which server changes let a binlog position go on, as pure logic (the servers are in tests/). */
class ServerIdentityTest {
  private static final ServerIdentity MARIADB_11 = new ServerIdentity(null, 11, false);
  private static final ServerIdentity MARIADB_12 = new ServerIdentity(null, 12, false);
  private static final String UUID_A = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
  private static final String UUID_B = "8a94f357-aab4-11df-86ab-c80aa9429562";

  @Test
  void mariaDbServersAreToldApartByServerIdAndNeverGoOnAcrossServers() {
    assertThat(MARIADB_11.comparedWith(new ServerIdentity(null, 11, false))).isEqualTo(Change.SAME);
    assertThat(MARIADB_11.comparedWith(MARIADB_12)).isEqualTo(Change.ANOTHER);
  }

  @Test
  void mySqlServersAreToldApartByUuidAndGoOnByGtidOnlyWhenBothHaveGtidsOn() {
    // the same data directory under another server_id is the same server
    assertThat(
            new ServerIdentity(UUID_A, 1, true).comparedWith(new ServerIdentity(UUID_A, 2, true)))
        .isEqualTo(Change.SAME);
    assertThat(
            new ServerIdentity(UUID_A, 1, true).comparedWith(new ServerIdentity(UUID_B, 1, true)))
        .isEqualTo(Change.ANOTHER_WITH_GTIDS);
    assertThat(
            new ServerIdentity(UUID_A, 1, false).comparedWith(new ServerIdentity(UUID_B, 2, true)))
        .isEqualTo(Change.ANOTHER);
    assertThat(
            new ServerIdentity(UUID_A, 1, true).comparedWith(new ServerIdentity(UUID_B, 2, false)))
        .isEqualTo(Change.ANOTHER);
    // a MySQL server replaced by a MariaDB one (or back) with the same server_id
    assertThat(new ServerIdentity(UUID_A, 11, true).comparedWith(MARIADB_11))
        .isEqualTo(Change.ANOTHER);
    assertThat(MARIADB_11.comparedWith(new ServerIdentity(UUID_A, 11, true)))
        .isEqualTo(Change.ANOTHER);
  }

  @Test
  void theStateFormRoundTripsAndRefusesWhatItDoesNotKnow() {
    for (ServerIdentity id :
        new ServerIdentity[] {
          MARIADB_11, new ServerIdentity(UUID_A, 7, true), new ServerIdentity(UUID_B, 0, false)
        }) {
      assertThat(ServerIdentity.parse(id.encode())).isEqualTo(id);
    }
    assertThatThrownBy(() -> ServerIdentity.parse("v2;1;-;"))
        .hasMessageContaining("Not a server identity of the job's state: v2;1;-;");
  }

  @Test
  void messagesNameTheServer() {
    assertThat(MARIADB_11.describe()).isEqualTo("server_id 11");
    assertThat(new ServerIdentity(UUID_A, 7, true).describe())
        .isEqualTo("server_uuid " + UUID_A + " (server_id 7)");
  }
}
