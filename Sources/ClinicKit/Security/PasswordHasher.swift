import CArgon2
import Foundation

/// Argon2id through libargon2, stored as the standard PHC encoded string
/// (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`).
public struct PasswordHasher: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// Memory in KiB.
        public var memoryKiB: UInt32
        public var iterations: UInt32
        public var parallelism: UInt32

        public init(memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
        }

        /// OWASP's minimum for Argon2id: m = 19 MiB, t = 2, p = 1.
        public static let owaspMinimum = Parameters(memoryKiB: 19 * 1024, iterations: 2, parallelism: 1)

        /// Whether these parameters are at least as strong as `other` in every dimension.
        public func isAtLeast(_ other: Parameters) -> Bool {
            memoryKiB >= other.memoryKiB && iterations >= other.iterations && parallelism >= other.parallelism
        }
    }

    public let parameters: Parameters
    static let saltLength = 16
    static let hashLength = 32

    public init(parameters: Parameters = .owaspMinimum) {
        self.parameters = parameters
    }

    /// A password as it is hashed: RFC 8265's OpaqueString profile, as NIST SP 800-63B asks —
    /// every non-ASCII space becomes U+0020 and the whole is NFC — so that "é" typed composed
    /// or decomposed is the same password.
    public static func prepared(_ password: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in password.unicodeScalars {
            scalars.append(scalar.properties.generalCategory == .spaceSeparator ? " " : scalar)
        }
        return String(scalars).precomposedStringWithCanonicalMapping
    }

    /// How a password matched a hash.
    public enum Match: Sendable, Equatable {
        /// It did not.
        case none
        /// Its prepared form did: the usual case.
        case prepared
        /// Only its raw bytes did: a hash made before passwords were prepared. Replace it.
        case raw

        public var matched: Bool { self != .none }
    }

    public func hash(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: Self.saltLength)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: .min ... .max, using: &generator) }
        let passwordBytes = Array(Self.prepared(password).utf8)
        let length = argon2_encodedlen(parameters.iterations, parameters.memoryKiB, parameters.parallelism,
                                       UInt32(Self.saltLength), UInt32(Self.hashLength), Argon2_id)
        var encoded = [CChar](repeating: 0, count: length)
        let status = passwordBytes.withUnsafeBytes { pwd in
            argon2id_hash_encoded(parameters.iterations, parameters.memoryKiB, parameters.parallelism,
                                  pwd.baseAddress, pwd.count, salt, salt.count, Self.hashLength,
                                  &encoded, encoded.count)
        }
        guard status == ARGON2_OK.rawValue else {
            throw ClinicError(.internalError, .internalError, "argon2: " + String(cString: argon2_error_message(status)))
        }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches the encoded hash. A malformed hash never matches.
    public func verify(_ password: String, against encoded: String) -> Bool {
        match(password, against: encoded).matched
    }

    /// Whether `password` matches the encoded hash, and how: its prepared form first, then,
    /// when that differs, the bytes as typed (hashes made before passwords were prepared).
    public func match(_ password: String, against encoded: String) -> Match {
        let prepared = Array(Self.prepared(password).utf8), raw = Array(password.utf8)
        if Self.verify(prepared, encoded) { return .prepared }
        if raw != prepared, Self.verify(raw, encoded) { return .raw }
        return .none
    }

    static func verify(_ passwordBytes: [UInt8], _ encoded: String) -> Bool {
        guard encoded.hasPrefix("$argon2id$") else { return false }
        let status = passwordBytes.withUnsafeBytes { pwd in
            encoded.withCString { argon2id_verify($0, pwd.baseAddress, pwd.count) }
        }
        return status == ARGON2_OK.rawValue
    }

    /// The parameters an encoded hash was made with, or nil if it cannot be read.
    public static func parameters(of encoded: String) -> Parameters? {
        // $argon2id$v=19$m=19456,t=2,p=1$salt$hash
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: true)
        guard fields.count == 5, fields[0] == "argon2id" else { return nil }
        var values: [Substring: UInt32] = [:]
        for pair in fields[2].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let value = UInt32(parts[1]) else { return nil }
            values[parts[0]] = value
        }
        guard let m = values["m"], let t = values["t"], let p = values["p"] else { return nil }
        return Parameters(memoryKiB: m, iterations: t, parallelism: p)
    }

    /// True when the hash was made with weaker parameters than this hasher's (or cannot be
    /// read): it should be replaced at the next successful login.
    public func needsRehash(_ encoded: String) -> Bool {
        guard let existing = Self.parameters(of: encoded) else { return true }
        return !existing.isAtLeast(parameters)
    }
}
