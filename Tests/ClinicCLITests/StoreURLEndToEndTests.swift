import Foundation
import Testing

/// Issue 25's defect: a PostgreSQL URL in --db or CLINIC_DB was taken for a file name and a
/// SQLite database appeared under a folder called `postgresql:`. It is now the PostgreSQL store
/// (ClinicStorePostgresTests, on a real server) or a clear error; never a file.
@Suite struct StoreURLEndToEndTests {
    @Test func aURLNeverBecomesAFile() throws {
        let cli = try CLIHarness()
        // A Unix socket folder that does not exist: no server there, refused at once (a host
        // name would first wait for the resolver, which has no network here).
        let url = "postgresql://clinic@/clinic?host=/nonexistent-clinic-socket&connect_timeout=2"
        let viaOption = try cli.run(["clinics", "list", "--db", url, "--json"])
        #expect(viaOption.status == 6 && viaOption.errorCode == "store_unreachable", "\(viaOption.stderr)")
        let viaEnvironment = try cli.run(["clinics", "list", "--json"],
                                         environment: ["CLINIC_DB": "postgres://clinic@/clinic?host=/nonexistent-clinic-socket"])
        #expect(viaEnvironment.status == 6 && viaEnvironment.errorCode == "store_unreachable", "\(viaEnvironment.stderr)")
        let server = try cli.run(["serve", "--port", "0", "--json"], environment: ["CLINIC_DB": url])
        #expect(server.status == 6 && server.errorCode == "store_unreachable", "the server refuses at start-up: \(server.stderr)")
        let other = try cli.run(["clinics", "list", "--db", "mysql://u@h/db", "--json"])
        #expect(other.status == 2 && other.errorCode == "store_url_invalid", "\(other.stderr)")
        let withPassword = try cli.run(["admin", "migrate", "--db", "postgresql://u:pw-in-url-77@h/db", "--json"])
        #expect(withPassword.errorCode == "store_url_invalid" && !withPassword.stderr.contains("pw-in-url-77"))
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.folder.path)
        #expect(!names.contains { $0.hasPrefix("postgres") || $0.hasPrefix("mysql") }, "\(names)")
        #expect(!FileManager.default.fileExists(atPath: cli.databasePath), "no SQLite file was made either")
    }
}
