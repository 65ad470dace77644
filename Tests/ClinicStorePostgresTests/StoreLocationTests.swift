import ClinicKit
@testable import ClinicStorePostgres
import Foundation
import NIOSSL
import Testing

/// The database setting: PostgreSQL URLs in libpq's form, everything else a SQLite path.
@Suite struct StoreLocationTests {
    @Test func pathsStaySQLiteFiles() throws {
        for path in ["clinic.sqlite", "/var/lib/clinic/clinic.sqlite", "./a b/c.sqlite", "postgresql", "postgresql:x",
                     "dir/postgresql://x", "~/x.sqlite", "1http://x"] {
            #expect(try StoreLocation.parse(path) == .sqlite(path: path), "\(path)")
        }
    }

    @Test func aFullURL() throws {
        let location = try StoreLocation.parse(
            "postgresql://alice@db.example.com:6543/clinic?sslmode=verify-full&sslrootcert=/etc/ca.pem&connect_timeout=3&application_name=clinic%20api")
        guard case .postgres(let url) = location else { Issue.record("not postgres: \(location)"); return }
        #expect(url.user == "alice" && url.host == "db.example.com" && url.port == 6543 && url.database == "clinic")
        #expect(url.sslMode == .verifyFull && url.sslRootCert == "/etc/ca.pem" && url.connectTimeout == 3)
        #expect(url.applicationName == "clinic api" && !url.usesUnixSocket)
        #expect(url.serverDescription == "db.example.com:6543")
    }

    @Test func shortSchemeSocketsAndDefaults() throws {
        guard case .postgres(let plain) = try StoreLocation.parse("postgres://") else { Issue.record("not postgres"); return }
        #expect(plain.user == nil && plain.host == nil && plain.database == nil && plain.port == 5432 && plain.sslMode == .prefer)
        #expect(plain.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        guard case .postgres(let socket) = try StoreLocation.parse("POSTGRESQL://bob@/clinic?host=/tmp/pg%20sock&port=5433")
        else { Issue.record("not postgres"); return }
        #expect(socket.socketDirectory == "/tmp/pg sock" && socket.host == nil && socket.socketPath == "/tmp/pg sock/.s.PGSQL.5433")
        #expect(socket.user == "bob" && socket.database == "clinic")
        // An encoded socket folder as the host, as libpq reads it.
        let encoded = try PostgresURL(parsing: "postgresql://%2Fvar%2Frun%2Fpg/db")
        #expect(encoded.socketDirectory == "/var/run/pg" && encoded.host == nil)
        let v6 = try PostgresURL(parsing: "postgresql://[::1]:5433/db")
        #expect(v6.host == "::1" && v6.port == 5433 && v6.serverDescription == "[::1]:5433")
    }

    @Test func percentDecoding() throws {
        let url = try PostgresURL(parsing: "postgresql://al%40ice@h/caf%C3%A9?application_name=a%26b")
        #expect(url.user == "al@ice" && url.database == "café" && url.applicationName == "a&b")
        #expect(clinicError { _ = try PostgresURL(parsing: "postgresql://h/bad%zz") }?.code == .storeURLInvalid)
    }

    @Test func aPasswordIsRefusedAndNeverRepeated() {
        for url in ["postgresql://alice:s3cret-pw@host/db", "postgresql://alice:@host/db",
                    "postgresql://host/db?password=s3cret-pw", "postgres://alice:s3cret-pw@/db?nonsense=1"] {
            let error = clinicError { _ = try StoreLocation.parse(url) }
            #expect(error?.code == .storeURLInvalid && error?.key == .storePasswordInURL, "\(url)")
            for language in Language.allCases {
                let message = error?.message(in: language) ?? ""
                #expect(!message.contains("s3cret") && message.contains("PGPASSWORD") && message.contains(".pgpass"))
            }
            #expect(!(error?.arguments.joined().contains("s3cret") ?? true))
        }
    }

    @Test func badURLsAreClearErrors() {
        let cases: [(String, MessageKey)] = [
            ("mysql://u@h/db", .storeSchemeUnsupported),
            ("file:///tmp/x.sqlite", .storeSchemeUnsupported),
            ("postgresql://h/db?sslmode=sometimes", .storeParameterInvalid),
            ("postgresql://h/db?sslcert=/x", .storeParameterUnknown),
            ("postgresql://h/db?target_session_attrs=any", .storeParameterUnknown),
            ("postgresql://h:0/db", .storeParameterInvalid),
            ("postgresql://h:70000/db", .storeParameterInvalid),
            ("postgresql://h:abc/db", .storeParameterInvalid),
            ("postgresql://h1,h2/db", .storeSeveralHosts),
            ("postgresql://h/db?connect_timeout=0", .storeParameterInvalid),
            ("postgresql://h/db?sslmode=require&sslmode=disable", .storeParameterInvalid),
            ("postgresql://h/db?sslmode", .storeParameterInvalid),
            ("postgresql://[::1/db", .storeParameterInvalid),
        ]
        for (url, key) in cases {
            let error = clinicError { _ = try StoreLocation.parse(url) }
            #expect(error?.code == .storeURLInvalid && error?.key == key, "\(url): \(String(describing: error))")
            #expect(error.map { !$0.message(in: .ru).isEmpty && !$0.message(in: .en).isEmpty } == true)
        }
    }

    /// A password typed into the URL with an unencoded '/' or '?' is cut by the URL's own
    /// syntax into a port or a parameter name: refused, and no part of it is repeated.
    @Test func aPasswordCutByTheURLsSyntaxIsNotRepeated() {
        for url in ["postgresql://alice:pq7x/ss3cret@h/db", "postgresql://alice:pq7x?ss3cret@h/db"] {
            let error = clinicError { _ = try StoreLocation.parse(url) }
            #expect(error?.code == .storeURLInvalid, "\(url): \(String(describing: error))")
            for language in [Language.en, .ru] {
                let text = (error?.message(in: language) ?? "") + (error?.arguments.joined() ?? "")
                #expect(!text.contains("ss3cret") && !text.contains("pq7x"), "\(url): \(text)")
            }
        }
    }

    /// What users type: a space, Unicode and '+' in a path or a value stay what they are
    /// ('+' is not a space in libpq's URLs).
    @Test func pathsAndValuesAsTyped() throws {
        let url = try PostgresURL(parsing: "postgresql://%D0%BC%D0%B0%D1%80%D0%B8%D1%8F@/%D0%BA%D0%BB%D0%B8%D0%BD%D0%B8%D0%BA%D0%B0?host=/tmp/pg%20sock&application_name=a+b")
        #expect(url.user == "мария" && url.database == "клиника")
        #expect(url.applicationName == "a+b")
        #expect(url.socketDirectory == "/tmp/pg sock")
        if case .sqlite(let path) = try StoreLocation.parse("Los Angeles/Москва клиника.sqlite") {
            #expect(path == "Los Angeles/Москва клиника.sqlite")
        } else {
            Issue.record("a two-word Unicode path is a SQLite file")
        }
    }

    @Test func redactedReadsBackAsTheSameURL() throws {
        for text in ["postgresql://alice@db.example.com:6543/clinic?sslmode=verify-full&sslrootcert=/etc/ca.pem",
                     "postgresql://bob@/clinic?host=/tmp/pg%20sock", "postgres://", "postgresql://[::1]:5433/db",
                     "postgresql://al%40ice@h/caf%C3%A9?application_name=a%26b&connect_timeout=5"] {
            let url = try PostgresURL(parsing: text)
            #expect(try PostgresURL(parsing: url.redacted) == url, "\(text) → \(url.redacted)")
            #expect(url.description == url.redacted)
        }
    }

    @Test func verificationNeedsARootCertificate() {
        // verify-full without sslrootcert looks for ~/.postgresql/root.crt, like libpq.
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("pg-home-\(UUID().uuidString)").path
        let error = clinicError {
            _ = try TLSSettings(url: try PostgresURL(parsing: "postgresql://db.example.com/x?sslmode=verify-full"),
                                environment: ["HOME": home])
        }
        #expect(error?.code == .storeURLInvalid && error?.key == .storeTLSSetup)
        #expect(error?.message(in: .en).contains(home + "/.postgresql/root.crt") == true)
    }

    @Test func tlsFollowsSSLMode() throws {
        let none = try TLSSettings(url: try PostgresURL(parsing: "postgresql://h/x?sslmode=disable"), environment: [:])
        #expect(none.configuration == nil && !none.enforced)
        let prefer = try TLSSettings(url: try PostgresURL(parsing: "postgresql://h/x"), environment: [:])
        #expect(prefer.configuration?.certificateVerification == CertificateVerification.none && !prefer.enforced)
        let require = try TLSSettings(url: try PostgresURL(parsing: "postgresql://h/x?sslmode=require"), environment: [:])
        #expect(require.configuration?.certificateVerification == CertificateVerification.none && require.enforced)
        let system = try TLSSettings(url: try PostgresURL(parsing: "postgresql://h/x?sslmode=verify-full&sslrootcert=system"),
                                     environment: [:])
        #expect(system.configuration?.certificateVerification == .fullVerification && system.enforced)
        let socket = try TLSSettings(url: try PostgresURL(parsing: "postgresql:///x?host=/tmp&sslmode=verify-full"), environment: [:])
        #expect(socket.configuration == nil, "a Unix socket has no TLS")
    }
}
