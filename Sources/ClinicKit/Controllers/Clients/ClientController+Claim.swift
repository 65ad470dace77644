import Crypto
import Foundation

// A walk-in claims the account the front desk registered (issue 29): with the one-time code
// they were given, they choose a login and a password, and can log in from then on.

extension ClientController {
    /// The SHA-256 a claim code is stored and looked up by: the code folded (case, spaces and
    /// dashes do not matter when it is typed).
    static func claimCodeHash(_ code: String) -> String {
        let folded = code.uppercased().filter { $0.isLetter || $0.isNumber }
        return Array(SHA256.hash(data: Data("claim-code:\(folded)".utf8))).hexString
    }

    /// Sets the login and password of the walk-in a claim code was given to, and uses the code
    /// up. The login and password are checked as at registration (the password also against
    /// the patient's name); the patient accepts the current privacy policy by claiming. A code
    /// that is unknown, used or expired is one refusal (`invalid_input`), whatever it was: it
    /// says nothing of which. Nothing changes on any refusal.
    public func claim(code: String, login: String, password: String, confirmPassword: String? = nil) throws -> Client {
        let login = try Self.checkedClaim(login: login, password: password, confirmPassword: confirmPassword)
        let hashOfCode = Self.claimCodeHash(code)
        let now = self.now()
        // The patient's name is needed for the password check: looked up first, read again below.
        let owner = try database.reading { tx in try ClaimRules.owner(tx, store: database, codeHash: hashOfCode, at: now) }
        try checkClaimPassword(password, login: login, owner: owner)
        let rules = ClaimRules(codeHash: hashOfCode, login: login, passwordHash: try hasher.hash(password), ownerId: owner?.id, now: now)
        return try database.writing { tx in try rules.run(tx, store: database) }
    }

    /// `claim` awaited (issue 56): the owner read awaited (`ClaimStore.claimCodeOwner`), the hash
    /// made on `passwords`, then the store's one transaction (`ClaimStore.claimAccount`).
    public func claim(code: String, login: String, password: String, confirmPassword: String? = nil,
                      passwords: some PasswordRunner) async throws -> Client {
        let login = try Self.checkedClaim(login: login, password: password, confirmPassword: confirmPassword)
        let hashOfCode = Self.claimCodeHash(code)
        let now = self.now()
        guard let owner = try await database.claimCodeOwner(codeHash: hashOfCode, at: now), !owner.hasOnlineAccount else {
            throw ClinicError.invalid(.claimCodeWrong)
        }
        // The policy on the runner too: its common-password list is read from a file once per process.
        let hasher = self.hasher
        let hash = try await passwords.run { [self] in
            try checkClaimPassword(password, login: login, owner: owner)
            return try hasher.hash(password)
        }
        return try await database.claimAccount(ClaimRules(codeHash: hashOfCode, login: login, passwordHash: hash, ownerId: owner.id, now: now))
    }

    /// The login (trimmed) and the confirmation checked before anything is read.
    static func checkedClaim(login: String, password: String, confirmPassword: String?) throws -> String {
        let login = login.trimmingCharacters(in: .whitespaces)
        let validator = Validator()
        if let problem = validator.problem(.login, login) { throw problem }
        if let confirmPassword, !validator.passwordsMatch(password, confirmPassword) { throw ClinicError.invalid(.passwordsDiffer) }
        return login
    }

    /// No owner, or one with an online account already, is the code's one refusal; the password
    /// is checked as at registration, also against the owner's name.
    func checkClaimPassword(_ password: String, login: String, owner: Client?) throws {
        guard let owner, !owner.hasOnlineAccount else { throw ClinicError.invalid(.claimCodeWrong) }
        if let problem = try passwordProblem(password, login: login, name: owner.name, surname: owner.surname) { throw problem }
    }
}
