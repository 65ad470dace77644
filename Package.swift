// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "clinic",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ClinicKit", targets: ["ClinicKit"]),
        .executable(name: "clinic", targets: ["clinic"]),
        .executable(name: "clinic-bench", targets: ["clinic-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        // The server (ClinicServer): Hummingbird without its default traits (no
        // swift-configuration), TLS by swift-nio-ssl, logs by swift-log.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        // The server's background work (group commit, outbox, map cache) as services in its ServiceGroup.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // The web app's server-rendered pages (logic-less templates, made for Hummingbird).
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
        // Tests only: the real HTTP client the end-to-end tests drive the server with.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        // The PostgreSQL store (ClinicStorePostgres): postgres-nio's PostgresClient pool.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        // GEOS through its reentrant C API only (geos_c.h with GEOS_USE_ONLY_R_API).
        .systemLibrary(
            name: "CGEOS",
            pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"])]),
        .systemLibrary(
            name: "CArgon2",
            pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]),
        // E-mail through libcurl's SMTP client (STARTTLS, SMTPS, authentication).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // libvips (Debian's libvips-dev) for photos: decoded and written again (issue 28).
        .systemLibrary(
            name: "CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]),
        // zlib (Debian's zlib1g-dev): the web app's gzip (Gzip).
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // qpdf's C API (Debian's libqpdf-dev): an uploaded PDF is parsed, its object streams and
        // filters decoded, and looked through for active content (issue 42).
        .systemLibrary(
            name: "CQPDF",
            pkgConfig: "libqpdf",
            providers: [.apt(["libqpdf-dev"])]),
        // libedit (Debian's libedit-dev), the BSD line editor: the interactive session's line
        // editing and history (issue 46), behind a small C shim (el_set is variadic).
        .target(
            name: "CEdit",
            linkerSettings: [.linkedLibrary("edit")]),
        .target(
            name: "ClinicImages",
            dependencies: ["ClinicKit", "CVips"]),
        // SQLite's C library (Debian's libsqlite3-dev): ClinicKit reads its read-only data files
        // (the gazetteer, the zone boundaries) with it; GRDB links the same library.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // The domain: the UML's controllers, the booking rules, geo, security, and the storage
        // seam (Storage/Seam) that each store implements. It depends on no store.
        .target(
            name: "ClinicKit",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                "CSQLite",
                "CArgon2",
                "CGEOS",
                "CZlib",
            ]),
        // The PDF check behind ClinicKit's port (`PDFChecking`) on libqpdf: the programs compose it.
        .target(
            name: "ClinicPDF",
            dependencies: ["ClinicKit", "CQPDF"]),
        // The transports behind ClinicKit's ports (issue 56): e-mail over SMTP and texts
        // through Kannel on libcurl, the HTTP geocoder. The fronts compose them.
        .target(
            name: "ClinicTransports",
            dependencies: ["ClinicKit", "CCurl"]),
        // The HTTP front: routes, middleware and the mapping of ClinicKit's errors to HTTP;
        // no SQL and no business rules.
        .target(
            name: "ClinicServer",
            dependencies: [
                "ClinicTransports",
                "ClinicKit",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPParserError: a body cut short is the client's fault (ErrorMiddleware).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]),
        // The embedded store: one SQLite file through GRDB (WAL, the writer lock, group commit's
        // savepoints, backup/restore/rotate-key, the migrations of Migrations/).
        .target(
            name: "ClinicStoreSQLite",
            dependencies: [
                "ClinicKit",
                // Each connection's own busy handler (BusyWait).
                "CSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        // The PostgreSQL store: postgres-nio's PostgresClient, TLS per sslmode, its own
        // migrations (Migrations/postgres). ClinicKit knows only StoreLocation.
        .target(
            name: "ClinicStorePostgres",
            dependencies: [
                "ClinicKit",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        // `clinic admin copy`: a SQLite file into a PostgreSQL database and back, row by row.
        .target(
            name: "ClinicStoreCopy",
            dependencies: [
                "ClinicKit",
                "ClinicStoreSQLite",
                "ClinicStorePostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "clinic",
            dependencies: [
                "ClinicKit",
                "ClinicTransports",
                "ClinicImages",
                "ClinicPDF",
                "ClinicServer",
                // The composition root (Context) chooses a store: these two.
                "ClinicStoreSQLite",
                "ClinicStorePostgres",
                "ClinicStoreCopy",
                "CEdit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // Benchmarks: build with -c release; see docs/BENCHMARKS.md.
        .executableTarget(
            name: "clinic-bench",
            dependencies: [
                "ClinicKit",
                "ClinicStoreSQLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks",
            exclude: ["postgis-compare.sh", "http-load.sh", "http-load", "find-stall.sh", "near-vs-box.py"]),
        // The tests' own PostgreSQL (scripts/postgres.sh, once per test process), for the
        // PostgreSQL store's tests and the ClinicKit suite's PostgreSQL run.
        .target(
            name: "ClinicTestPostgres",
            dependencies: [
                "ClinicKit",
                "ClinicStoreSQLite",
                "ClinicStorePostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/ClinicTestPostgres"),
        .testTarget(
            name: "ClinicImagesTests",
            dependencies: ["ClinicImages", "ClinicKit"],
            exclude: ["Fixtures"]),
        // The rules on plain facts (issue 56): ClinicKit alone, no store, no file.
        .testTarget(
            name: "ClinicRulesTests",
            dependencies: ["ClinicKit"]),
        .testTarget(
            name: "ClinicKitTests",
            dependencies: ["ClinicKit", "ClinicTransports", "ClinicStoreSQLite", "ClinicImages", "ClinicPDF", "CArgon2", "ClinicStorePostgres", "ClinicTestPostgres",
                           .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "ClinicStorePostgresTests",
            dependencies: [
                "ClinicKit",
                "ClinicStoreSQLite",
                "ClinicStorePostgres",
                "ClinicStoreCopy",
                "ClinicTestPostgres",
                // The end-to-end tests run the built binary against the test server.
                "clinic",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]),
        .testTarget(
            name: "ClinicCLITests",
            dependencies: ["ClinicKit", "ClinicStoreSQLite", "clinic", "ClinicTestPostgres"]),
        .testTarget(
            name: "ClinicServerTests",
            dependencies: [
                "ClinicKit",
                "ClinicTransports",
                "ClinicPDF",
                "ClinicStoreSQLite",
                "ClinicServer",
                "clinic",
                // Its `Process.reapedExitStatus`, shared with the CLI's harness.
                "ClinicTestPostgres",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            // A Nominatim stand-in the tests start (python3).
            exclude: ["Fixtures"]),
    ]
)
