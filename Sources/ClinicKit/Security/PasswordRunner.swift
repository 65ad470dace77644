import Foundation

/// Where an awaited use case runs its password work (Argon2, tens of milliseconds of CPU): the
/// server passes its gate and thread pool, so that a cooperative thread never computes a hash;
/// the CLI and tests run it where they are (`InlinePasswordRunner`).
public protocol PasswordRunner: Sendable {
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T
}

/// Password work run on the caller's thread.
public struct InlinePasswordRunner: PasswordRunner {
    public init() {}

    public func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try work()
    }
}
