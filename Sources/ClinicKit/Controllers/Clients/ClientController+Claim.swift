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
        let login = login.trimmingCharacters(in: .whitespaces)
        let validator = Validator()
        if let problem = validator.problem(.login, login) { throw problem }
        if let confirmPassword, !validator.passwordsMatch(password, confirmPassword) { throw ClinicError.invalid(.passwordsDiffer) }
        let hashOfCode = Self.claimCodeHash(code)
        let now = self.now()
        // The patient's name is needed for the password check: looked up first, read again below.
        let owner = try database.reading { tx -> Client? in
            guard let found = try tx.claimCode(hash: hashOfCode), now < found.expiresAt else { return nil }
            return try database.client(tx, id: found.clientId)
        }
        guard let owner, !owner.hasOnlineAccount else { throw ClinicError.invalid(.claimCodeWrong) }
        if let problem = try passwordProblem(password, login: login, name: owner.name, surname: owner.surname) { throw problem }
        let hash = try hasher.hash(password)
        return try database.writing { tx in
            // The code is used up first, in one statement: of several claims with one code at
            // once (on several servers), one deletes the row and the others find none. A
            // refusal below rolls the deletion back with the rest.
            guard let clientId = try tx.consumeClaimCode(hash: hashOfCode, at: now), clientId == owner.id,
                  var client = try database.client(tx, id: clientId), !client.hasOnlineAccount else {
                throw ClinicError.invalid(.claimCodeWrong)
            }
            if try tx.loginExists(loginKey: Client.key(forLogin: login)) { throw ClinicError(.loginTaken, .loginTaken, login) }
            client.login = login
            client.loginKey = Client.key(forLogin: login)
            client.passwordHash = hash
            client.privacyAcceptedAt = Date(seconds: now.seconds)
            client.privacyVersion = PrivacyPolicy.version
            try database.updateClient(tx, client)
            return client
        }
    }
}
