import Foundation

/// Finds the project's `Data/` and `Migrations/` folders from any working directory:
/// `$CLINIC_RESOURCES` if set, else the nearest ancestor of the running executable that
/// holds both (a build in `.build/…` of a checkout), else the checkout this library was
/// compiled from.
public struct Resources: Sendable {
    public let root: URL

    public var migrations: URL { root.appendingPathComponent("Migrations", isDirectory: true) }
    public var data: URL { root.appendingPathComponent("Data", isDirectory: true) }
    public var defaultDirectory: URL { data.appendingPathComponent("clinics.csv") }

    public init(root: URL) { self.root = root }

    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Resources {
        var candidates: [URL] = []
        if let explicit = environment["CLINIC_RESOURCES"], !explicit.isEmpty {
            candidates.append(URL(fileURLWithPath: explicit, isDirectory: true))
        }
        // argv[0] is a bare name when run from PATH: ask the kernel where the executable is.
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? Bundle.main.executablePath ?? CommandLine.arguments.first ?? "."
        var directory = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<8 {
            candidates.append(directory)
            directory = directory.deletingLastPathComponent()
        }
        // Sources/ClinicKit/Storage/Resources.swift → the package root.
        var source = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { source = source.deletingLastPathComponent() }
        candidates.append(source)

        for candidate in candidates {
            let resources = Resources(root: candidate)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: resources.migrations.path, isDirectory: &isDirectory),
               isDirectory.boolValue,
               FileManager.default.fileExists(atPath: resources.defaultDirectory.path) {
                return resources
            }
        }
        throw ClinicError(.storage, .resourcesMissing)
    }
}
