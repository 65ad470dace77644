import Foundation

// A change of a patient's own record awaited (issue 56): the store reads the patient with their
// row locked, their personal fields opened, the e-mail confirmation waiting and, when asked,
// their phone; ClinicKit decides on them (`ClientController`'s pure `confirmingEmail`,
// `removingEmail`, `changingProfile`); the store writes the decision (`ClientWrite`s in order:
// the record sealed again with its search tokens, the confirmation's end or its wrong guess
// counted, the mail not yet sent dropped, the city's geocode kept, what comes by text saved, a
// new number with its code and the code's text).

/// The awaited changes of a patient's record a `ClinicStore` offers.
public protocol ClientChangesStore: Sendable {
    /// One change in one transaction: the patient (nil: no such patient) locked until COMMIT,
    /// `decide`, the writes; `decide`'s result.
    /// `phone`: the patient's phone is read too (locked as well). `number`: a number the change
    /// is about (E.164): its lookup key is made under the store's key, and when a texting gateway
    /// was last seen is read (`ClientChangeFacts.numberKey`, `textGatewaySeen`).
    func changeClient<T: Sendable>(id: Int64, phone: Bool, number: String?,
                                   decide: @escaping @Sendable (ClientChangeFacts?) throws -> ClientChange<T>) async throws -> T
}

extension ClientChangesStore {
    /// A change about no number.
    public func changeClient<T: Sendable>(id: Int64, phone: Bool, decide: @escaping @Sendable (ClientChangeFacts?) throws -> ClientChange<T>)
        async throws -> T {
        try await changeClient(id: id, phone: phone, number: nil, decide: decide)
    }

    /// A change decided without the patient's phone.
    public func changeClient<T: Sendable>(id: Int64, decide: @escaping @Sendable (ClientChangeFacts?) throws -> ClientChange<T>)
        async throws -> T {
        try await changeClient(id: id, phone: false, decide: decide)
    }
}

/// What a change of a patient's record is decided on.
public struct ClientChangeFacts: Sendable, Equatable {
    /// The patient, personal fields opened.
    public let client: Client
    /// The code waiting for the address to confirm (`Client.pendingEmail`), if one was sent.
    public let emailConfirmation: EmailConfirmation?
    /// The patient's phone, when the change asked for it and they have one.
    public let phone: StoredPhone?
    /// The lookup key of the number the change is about (`StoredPhone.numberKey`), when it asked.
    public let numberKey: String?
    /// When a process with a texting gateway last said so (whole seconds; nil: never, or not asked).
    public let textGatewaySeen: Int64?

    public init(client: Client, emailConfirmation: EmailConfirmation?, phone: StoredPhone? = nil, numberKey: String? = nil,
                textGatewaySeen: Int64? = nil) {
        self.client = client; self.emailConfirmation = emailConfirmation; self.phone = phone
        self.numberKey = numberKey; self.textGatewaySeen = textGatewaySeen
    }

    /// The whole change in the caller's write transaction (the seam's path, and SQLite's): the
    /// facts read, `decide`, its writes; its result.
    package static func change<T>(_ tx: any StoreWriting, store: any ClinicStore, id: Int64, phone: Bool = false, number: String? = nil,
                                  _ decide: (ClientChangeFacts?) throws -> ClientChange<T>) throws -> T {
        let key = try number.map { StoredPhone.key(of: $0, cipher: try AppointmentNotes.sealingCipher(tx)) }
        let change = try decide(try read(tx, store: store, id: id, phone: phone, numberKey: key))
        try change.apply(tx, store: store, clientId: id)
        return change.result
    }

    /// The facts in the caller's transaction; the gateway's sign of life read with a number's key.
    package static func read(_ tx: any StoreReading, store: any ClinicStore, id: Int64, phone: Bool,
                             numberKey: String? = nil) throws -> ClientChangeFacts? {
        guard let stored = try tx.storedClient(id: id) else { return nil }
        return ClientChangeFacts(client: try store.opened(tx, stored), emailConfirmation: try tx.emailConfirmation(ofClient: id),
                                 phone: phone ? try tx.phone(ofClient: id) : nil, numberKey: numberKey,
                                 textGatewaySeen: numberKey == nil ? nil : try tx.setting(Outbox.textGatewaySetting).flatMap { Int64($0) })
    }
}

extension StoredPhone {
    /// The lookup key of `number` under `cipher` (an HMAC: `Texts.numberKey`).
    public static func key(of number: String, cipher: FieldCipher) -> String { Texts.numberKey(number, cipher: cipher) }
}

/// One write of a change of a patient's record.
public enum ClientWrite: Sendable, Equatable {
    /// The record as it is here: personal fields sealed again under the store's key, the search
    /// tokens made again, and whether mail may go to the patient.
    case rewrite(Client)
    /// The e-mail confirmation ended.
    case deleteEmailConfirmation
    /// A wrong guess at the e-mail code counted (in one statement).
    case countWrongEmailCode
    /// The patient's deliveries of `channels` not yet sent dropped.
    case dropPendingDeliveries([DeliveryChannel])
    /// The geocode of the patient's new city kept (or its hit counted).
    case recordGeocode(GeocodeCacheWrite)
    /// The patient's phone saved as it is here, at the time given.
    case savePhone(StoredPhone, at: Date)
    /// A send counted, the change refused past its limit (`SendCount`), at the time given.
    case countSend(SendCount, at: Date)
    /// A new e-mail code waits (its hash; attempts back to none), replacing any other.
    case replaceEmailConfirmation(codeHash: String, expiresAt: Date)
    /// The e-mailed codes not yet sent dropped.
    case dropPendingEmailCodes
    /// A code's e-mail queued, the code sealed to its delivery under the store's key.
    case enqueueEmailCode(String, at: Date)
    /// The patient's phone saved as it is here with `number` sealed into it under the store's
    /// key (its `numberSealed` is the store's to fill), at the time given.
    case savePhoneNumber(String, StoredPhone, at: Date)
    /// A code's text queued (`body`, the code in the patient's language), sealed to its delivery
    /// under the store's key.
    case enqueueCodeText(String, at: Date)
}

extension ClientWrite {
    /// What a queued code is sealed to: its delivery.
    package static func codeContext(_ deliveryId: Int64) -> String { "delivery:\(deliveryId)" }

    /// A patient's number as their phone's row keeps it: sealed to them.
    package static func sealedNumber(_ number: String, clientId: Int64, cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(number.utf8), context: Texts.numberContext(clientId))
    }
}

/// A change of a patient's record: its writes, in order, and the caller's answer.
public struct ClientChange<Result: Sendable>: Sendable {
    public let writes: [ClientWrite]
    public let result: Result

    public init(writes: [ClientWrite], result: Result) { self.writes = writes; self.result = result }

    /// The writes in the caller's transaction (the seam's path, and SQLite's).
    package func apply(_ tx: any StoreWriting, store: any ClinicStore, clientId: Int64) throws {
        for write in writes {
            switch write {
            case .rewrite(let client): try store.updateClient(tx, client)
            case .deleteEmailConfirmation: try tx.deleteEmailConfirmation(ofClient: clientId)
            case .countWrongEmailCode: try tx.countWrongEmailCode(ofClient: clientId)
            case .dropPendingDeliveries(let channels): try tx.dropPendingDeliveries(ofClient: clientId, channels: Set(channels))
            case .recordGeocode(let write): try write.apply(tx)
            case .savePhone(let phone, let at): try tx.savePhone(phone, at: at)
            case .countSend(let counted, let at): try counted.count(tx, at: at)
            case .replaceEmailConfirmation(let hash, let expiresAt):
                try tx.replaceEmailConfirmation(ofClient: clientId, codeHash: hash, expiresAt: expiresAt)
            case .dropPendingEmailCodes: try tx.dropPendingEmailCodes(ofClient: clientId)
            case .enqueueEmailCode(let code, let at):
                let id = try tx.enqueueEmailCodeDelivery(toClient: clientId, at: at)
                try tx.setDeliveryPayload(try store.sealingCipher(tx).seal(bytes: Data(code.utf8), context: ClientWrite.codeContext(id)),
                                          ofDelivery: id)
            case .savePhoneNumber(let number, var phone, let at):
                phone.numberSealed = try ClientWrite.sealedNumber(number, clientId: clientId, cipher: try store.sealingCipher(tx))
                try tx.savePhone(phone, at: at)
            case .enqueueCodeText(let body, let at):
                _ = try Texts.enqueue(tx, clientId: clientId, code: true, body: body, messageId: nil, now: at)
            }
        }
    }
}

/// A patient's record as a store writes it: the plain columns with the personal fields blank,
/// those fields sealed, whether mail may go to them, and their search tokens (`PatientIndex`).
package struct SealedClient: Sendable {
    package let row: Client
    package let personal: Data
    package let hasEmail: Bool
    package let tokens: [Data]

    package init(_ client: Client, cipher: FieldCipher) throws {
        var row = client
        row.take(FieldCipher.Personal(name: "", surname: "", street: "", house: "", lat: nil, lon: nil))
        self.row = row
        personal = try cipher.seal(client.personal, loginKey: client.loginKey)
        hasEmail = client.email != nil
        tokens = PatientIndex.tokens(client, key: PatientIndex.key(cipher))
    }
}
