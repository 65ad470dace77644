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
        .target(
            name: "ClinicKit",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                "CArgon2",
                "CGEOS",
            ]),
        .executableTarget(
            name: "clinic",
            dependencies: [
                "ClinicKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Benchmarks: build with -c release; see docs/BENCHMARKS.md.
        .executableTarget(
            name: "clinic-bench",
            dependencies: [
                "ClinicKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks",
            exclude: ["postgis-compare.sh"]),
        .testTarget(
            name: "ClinicKitTests",
            dependencies: ["ClinicKit", "CArgon2"]),
        .testTarget(
            name: "ClinicCLITests",
            dependencies: ["ClinicKit", "clinic"]),
    ]
)
