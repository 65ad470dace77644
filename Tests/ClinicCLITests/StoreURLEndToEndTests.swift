import Foundation
import Testing

/// Issue 25's defect: a PostgreSQL URL in --db or CLINIC_DB was taken for a file name and a
/// SQLite database appeared under a folder called `postgresql:`. It is now the PostgreSQL store
/// (the schema's admin commands, ClinicStorePostgresTests) or a clear error; never a file.
@Suite struct StoreURLEndToEndTests {
    @Test func aURLNeverBecomesAFile() throws {
        let cli = try CLIHarness()
        let url = "postgresql://clinic@db.invalid/clinic"
        let viaOption = try cli.run(["clinics", "list", "--db", url, "--json"])
        #expect(viaOption.status == 2 && viaOption.errorCode == "store_unsupported", "\(viaOption.stderr)")
        let viaEnvironment = try cli.run(["clinics", "list", "--json"], environment: ["CLINIC_DB": "postgres://clinic@/clinic"])
        #expect(viaEnvironment.status == 2 && viaEnvironment.errorCode == "store_unsupported", "\(viaEnvironment.stderr)")
        let server = try cli.run(["serve", "--port", "0", "--json"], environment: ["CLINIC_DB": url])
        #expect(server.status == 2 && server.errorCode == "store_unsupported", "the server refuses at start-up: \(server.stderr)")
        let other = try cli.run(["clinics", "list", "--db", "mysql://u@h/db", "--json"])
        #expect(other.status == 2 && other.errorCode == "store_url_invalid", "\(other.stderr)")
        let withPassword = try cli.run(["admin", "migrate", "--db", "postgresql://u:pw-in-url-77@h/db", "--json"])
        #expect(withPassword.errorCode == "store_url_invalid" && !withPassword.stderr.contains("pw-in-url-77"))
        let names = try FileManager.default.contentsOfDirectory(atPath: cli.folder.path)
        #expect(!names.contains { $0.hasPrefix("postgres") || $0.hasPrefix("mysql") }, "\(names)")
        #expect(!FileManager.default.fileExists(atPath: cli.databasePath), "no SQLite file was made either")
    }
}
