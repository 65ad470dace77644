import Crypto
import Foundation

/// What a text is about, for the patient's choices.
public enum TextTopic: Sendable, Equatable { case reminder, offer }

/// A text a decision asks for, about the inbox message written with it: sent only where the
/// patient takes texts of its topic (`Texts.takes`), its body sealed to its delivery.
public struct TextAsk: Sendable, Equatable {
    public var clientId: Int64
    public var topic: TextTopic
    public var body: String

    public init(clientId: Int64, topic: TextTopic, body: String) {
        self.clientId = clientId; self.topic = topic; self.body = body
    }

    /// Whether the patient with this phone takes it (`Texts.takes`).
    package func isTaken(by phone: StoredPhone?) -> Bool { Texts.takes(phone, topic) }

    /// Its body as its delivery keeps it (`Texts.sealed`).
    package func sealedBody(deliveryId: Int64, cipher: FieldCipher) throws -> Data {
        try Texts.sealed(body, deliveryId: deliveryId, cipher: cipher)
    }
}

/// What is texted, to whom: the rules every front shares (issue 45). A text goes only to a
/// number its patient confirmed, who has not replied STOP, and chose that kind of text; it says
/// nothing personal beyond the clinic's name, the time and a link. Its body is written when the
/// change happens (in that change's transaction, in the patient's language) and sealed in the
/// outbox's delivery like a code; the outbox sends it through the gateway (`TextSender`).
enum Texts {
    typealias Topic = TextTopic

    /// The place in a text's body where the site's address goes when it is sent (the outbox
    /// knows the address, `Outbox.run(site:)`): a body is written before.
    static let siteMark = "{site}"

    /// The key an incoming text finds its patient's number by: an HMAC of the E.164 number under
    /// a key derived from the personal-data key (the index does not tell the numbers).
    static func numberKey(_ number: String, cipher: FieldCipher) -> String {
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: cipher.key, info: Data("clinic text number index v1".utf8),
                                         outputByteCount: 32)
        return Array(HMAC<SHA256>.authenticationCode(for: Data(number.utf8), using: key)).hexString
    }

    static func numberContext(_ clientId: Int64) -> String { "phone:\(clientId)" }

    /// The patient's number, opened.
    static func number(_ phone: StoredPhone, cipher: FieldCipher) throws -> String {
        guard let number = String(data: try cipher.open(bytes: phone.numberSealed, context: numberContext(phone.clientId)),
                                  encoding: .utf8) else {
            throw ClinicError(.keyError, .personalUnreadable, numberContext(phone.clientId))
        }
        return number
    }

    /// Queues `body` to the patient's confirmed number when they take texts of `topic` (nil:
    /// none queued). `messageId`: the inbox message the text tells of.
    @discardableResult
    static func queue(_ tx: any StoreWriting, clientId: Int64, topic: Topic, body: String, messageId: Int64?, now: Date) throws -> Int64? {
        guard takes(try tx.phone(ofClient: clientId), topic) else { return nil }
        return try enqueue(tx, clientId: clientId, code: false, body: body, messageId: messageId, now: now)
    }

    /// Whether a patient with this phone takes texts of `topic`: a confirmed number, no STOP,
    /// and that kind of text chosen.
    static func takes(_ phone: StoredPhone?, _ topic: Topic) -> Bool {
        guard let phone, phone.confirmed, !phone.stopped else { return false }
        switch topic {
        case .reminder: return phone.textReminders
        case .offer: return phone.textOffers
        }
    }

    /// Writes a text delivery with its body sealed under the personal-data key.
    static func enqueue(_ tx: any StoreWriting, clientId: Int64, code: Bool, body: String, messageId: Int64?, now: Date) throws -> Int64 {
        let id = try tx.enqueueTextDelivery(toClient: clientId, code: code, messageId: messageId, at: now)
        try tx.setDeliveryPayload(try sealed(body, deliveryId: id, cipher: AppointmentNotes.sealingCipher(tx)), ofDelivery: id)
        return id
    }

    /// A text's body as its delivery keeps it: sealed under the personal-data key, to the delivery.
    static func sealed(_ body: String, deliveryId: Int64, cipher: FieldCipher) throws -> Data {
        try cipher.seal(bytes: Data(body.utf8), context: "delivery:\(deliveryId)")
    }

    /// The text of a reminder or of a clinic's cancellation (nil for other kinds of message).
    static func body(about appointment: Appointment, kind: MessageKind, context: AppointmentMessageContext) -> (String, Topic)? {
        let language = context.language ?? .en
        let when = DateText.dateTimeWithZone(appointment.startsAt, timeZone: Clinic.zone(named: context.timeZone), language: language)
        switch kind {
        case .reminder: return (Strings.text(.textReminder, language, [context.clinicName, when]), .reminder)
        case .clinicCancelled: return (Strings.text(.textClinicCancelled, language, [context.clinicName, when]), .reminder)
        default: return nil
        }
    }

    /// Texts the message about an appointment too, when its kind goes by text (a reminder, a
    /// clinic's cancellation) and the transaction is a store's (not a migration's bare inbox).
    static func about(_ tx: any InboxWriting, _ appointment: Appointment, kind: MessageKind, context: AppointmentMessageContext,
                      messageId: Int64, now: Date) throws {
        guard let clientId = appointment.clientId, let (body, topic) = body(about: appointment, kind: kind, context: context),
              let store = tx as? any StoreWriting else { return }
        try queue(store, clientId: clientId, topic: topic, body: body, messageId: messageId, now: now)
    }

    // MARK: One-tap links

    /// A new link token (given once, in the text) and the hash the offer keeps.
    static func newLink() -> (token: String, hash: String) {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }.hexString
        return (token, linkHash(token))
    }

    static func linkHash(_ token: String) -> String { Array(SHA256.hash(data: Data("offer-link:\(token)".utf8))).hexString }

    /// Whether a token is shaped like one this program makes (anything else is refused unread).
    static func isLinkToken(_ token: String) -> Bool {
        (16...128).contains(token.count) && token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
