import Foundation

// What comes back from the phone network, awaited (issue 56): a text's delivery report, the
// gateway's status read in ClinicKit (`TextController.reportOf`) and recorded by the store in one
// statement; a patient's reply, its sender found by one read (`replySender`), then the change it
// asks made through the use cases every front shares (texts off or on: `ClientChangesStore`; an
// appointment confirmed or cancelled: the patient's own awaited change).

/// The awaited reports and replies of the phone network a `ClinicStore` offers.
public protocol PhoneNetworkStore: Sendable {
    /// Records `report` on the text delivery `deliveryId` at `now`, unless a final report
    /// (delivered, failed, rejected) is there already: the network's reports of one text come in
    /// any order, and a replayed one cannot rewrite the outcome. Whether there is such a text
    /// delivery (false: none, or another purpose's).
    func recordReport(_ report: TextReport, ofDelivery deliveryId: Int64, at now: Date) async throws -> Bool
    /// One read: the phone confirmed for `number` (E.164; found by its key under the
    /// personal-data key) with its patient's language (English when none); nil for none.
    func replySender(number: String) async throws -> ReplySender?
}

/// Who a text came from: the confirmed phone and its patient's language.
public struct ReplySender: Sendable, Equatable {
    public let phone: StoredPhone
    public let language: Language

    public init(phone: StoredPhone, language: Language) { self.phone = phone; self.language = language }

    /// The sender read in the caller's transaction (the blocking path, and SQLite's).
    package static func read(_ tx: any StoreReading, store: any ClinicStore, number: String) throws -> ReplySender? {
        guard let phone = try tx.confirmedPhone(numberKey: Texts.numberKey(number, cipher: AppointmentNotes.cipher(tx))) else {
            return nil
        }
        return ReplySender(phone: phone, language: try store.client(tx, id: phone.clientId)?.language ?? .en)
    }
}
