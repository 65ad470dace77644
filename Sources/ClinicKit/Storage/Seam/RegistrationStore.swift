import Foundation

// A patient's registration awaited (issue 56): the store reads whether the login is taken and
// whether the home clinic asked for exists, ClinicKit decides on them
// (`ClientController.registering`), and the store writes the decision in the same transaction:
// the city's geocode kept, the patient sealed under the store's key with their search tokens.
// The database's unique index on the login key holds against a registration racing this one.

/// The awaited registration a `ClinicStore` offers.
public protocol RegistrationStore: Sendable {
    /// Whether a patient has this login key (`Client.key(forLogin:)`): a form's early answer.
    func loginTaken(loginKey: String) async throws -> Bool
    /// One transaction: the facts `ask` names, `decide`, its writes; the patient stored, with their id.
    func addClient(_ ask: RegistrationFactsRequest, decide: @escaping @Sendable (RegistrationFacts) throws -> NewClient)
        async throws -> Client
}

/// What a registration is decided on, asked for.
public struct RegistrationFactsRequest: Sendable, Equatable {
    public let loginKey: String
    /// The home clinic the patient chose; nil: none chosen (the nearest one is theirs).
    public let homeClinicId: Int64?

    public init(loginKey: String, homeClinicId: Int64?) { self.loginKey = loginKey; self.homeClinicId = homeClinicId }
}

/// What a registration is decided on.
public struct RegistrationFacts: Sendable, Equatable {
    /// A patient has the login already (any case).
    public let loginTaken: Bool
    /// Whether the home clinic asked for exists; nil when none was asked for.
    public let homeClinicExists: Bool?

    public init(loginTaken: Bool, homeClinicExists: Bool?) { self.loginTaken = loginTaken; self.homeClinicExists = homeClinicExists }

    /// The facts in the caller's transaction (the seam's path, and SQLite's).
    package static func read(_ tx: any StoreReading, _ ask: RegistrationFactsRequest) throws -> RegistrationFacts {
        RegistrationFacts(loginTaken: try tx.loginExists(loginKey: ask.loginKey),
                          homeClinicExists: try ask.homeClinicId.map { try tx.clinic(id: $0) != nil })
    }
}

/// A registration's writes: the patient (no id yet, personal fields open: the store seals
/// them) and the city's geocode to keep.
public struct NewClient: Sendable, Equatable {
    public let client: Client
    public let geocode: GeocodeCacheWrite?
    /// A walk-in registered at the front desk: the clinic's record of it and the audit row.
    public let walkIn: WalkInWrite?

    public init(client: Client, geocode: GeocodeCacheWrite?, walkIn: WalkInWrite? = nil) {
        self.client = client; self.geocode = geocode; self.walkIn = walkIn
    }

    /// The whole registration in the caller's write transaction: the facts read, `decide`, its
    /// writes; the patient with their id.
    package static func add(_ tx: any StoreWriting, store: any ClinicStore, _ ask: RegistrationFactsRequest,
                            _ decide: (RegistrationFacts) throws -> NewClient) throws -> Client {
        let new = try decide(try RegistrationFacts.read(tx, ask))
        try new.geocode?.apply(tx)
        let added = try store.addClient(tx, new.client)
        if let walkIn = new.walkIn, let id = added.id {
            try tx.insertWalkIn(clientId: id, clinicId: walkIn.clinicId, staffId: walkIn.staffId, at: walkIn.at)
            try AuditLog.append(tx, walkIn.audit(of: id))
        }
        return added
    }
}

/// A walk-in's registration as the front desk writes it beside the patient: the patient is
/// the clinic's from now on (`walk_ins`), and the audit row names them.
public struct WalkInWrite: Sendable, Equatable {
    public let clinicId: Int64
    public let staffId: Int64
    public let at: Date
    /// The audit row, its patient the new one (`audit(of:)`).
    public let audit: AuditAsk

    public init(clinicId: Int64, staffId: Int64, at: Date, audit: AuditAsk) {
        self.clinicId = clinicId; self.staffId = staffId; self.at = at; self.audit = audit
    }

    /// The audit row of the patient inserted with `id`.
    public func audit(of id: Int64) -> AuditAsk {
        var ask = audit
        ask.clientId = id
        return ask
    }
}
