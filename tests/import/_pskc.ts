/**
 * PSKC test files (RFC 6030 §6 layouts) with the values of spec 12 §6
 * (T12, T17, T18), and a builder for further correctly MACed keys.
 *
 * @module
 */
import { createCipheriv, createHmac, pbkdf2Sync } from "node:crypto";
import { Buffer } from "node:buffer";

/** T12's pre-shared key. */
export const T12_PSK = "12345678901234567890123456789012";
/** T12's MAC key CipherValue. */
export const T12_MAC_KEY_CIPHER =
  "AAECAwQFBgcICQoLDA0OD+5uCVIUWAIt3uwj3Vm/HEM09Gc4CudV495looSAjSuc";
/** T12's secret CipherValue and ValueMAC. */
export const T12_SECRET_CIPHER = "AAECAwQFBgcICQoLDA0OD+cIHItlB3Wra1DUpxVvOx2lef1VmNPCMl8jwZqIUqGv";
export const T12_VALUE_MAC = "Su+NvtQfmvfJzF6bmQiJqoLRExc=";
/** T12's MAC key in clear. */
export const T12_MAC_KEY = "1122334455667788990011223344556677889900";

/** base64(IV ‖ AES-128-CBC(key, IV, data)). */
export function encryptValue(keyHex: string, ivHex: string, data: Uint8Array): string {
  const c = createCipheriv("aes-128-cbc", Buffer.from(keyHex, "hex"), Buffer.from(ivHex, "hex"));
  return Buffer.concat([Buffer.from(ivHex, "hex"), c.update(data), c.final()]).toString("base64");
}

/** base64(HMAC-SHA1(macKey, base64-decoded cipher value)). */
export function valueMac(macKeyHex: string, cipherValue: string): string {
  return createHmac("sha1", Buffer.from(macKeyHex, "hex"))
    .update(Buffer.from(cipherValue, "base64")).digest("base64");
}

/** One KeyPackage with an encrypted HOTP secret (RFC 6030 figure 6 layout). */
export function hotpPackage(
  opts: { serial: string; cipher: string; mac: string; counter?: number; digits?: number },
): string {
  return `
  <KeyPackage>
    <DeviceInfo>
      <Manufacturer>Manufacturer</Manufacturer>
      <SerialNo>${opts.serial}</SerialNo>
    </DeviceInfo>
    <CryptoModuleInfo><Id>CM_ID_001</Id></CryptoModuleInfo>
    <Key Id="${opts.serial}" Algorithm="urn:ietf:params:xml:ns:keyprov:pskc:hotp">
      <Issuer>Issuer</Issuer>
      <AlgorithmParameters>
        <ResponseFormat Length="${opts.digits ?? 6}" Encoding="DECIMAL"/>
      </AlgorithmParameters>
      <Data>
        <Secret>
          <EncryptedValue>
            <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
            <xenc:CipherData>
              <xenc:CipherValue>${opts.cipher}</xenc:CipherValue>
            </xenc:CipherData>
          </EncryptedValue>
          <ValueMAC>${opts.mac}</ValueMAC>
        </Secret>
        <Counter><PlainValue>${opts.counter ?? 0}</PlainValue></Counter>
      </Data>
    </Key>
  </KeyPackage>`;
}

/** A pre-shared-key container (RFC 6030 figure 6) around `packages`. */
export function pskContainer(macKeyCipher: string, packages: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<KeyContainer Version="1.0"
    xmlns="urn:ietf:params:xml:ns:keyprov:pskc"
    xmlns:ds="http://www.w3.org/2000/09/xmldsig#"
    xmlns:xenc="http://www.w3.org/2001/04/xmlenc#">
  <EncryptionKey>
    <ds:KeyName>Pre-shared-key</ds:KeyName>
  </EncryptionKey>
  <MACMethod Algorithm="http://www.w3.org/2000/09/xmldsig#hmac-sha1">
    <MACKey>
      <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
      <xenc:CipherData>
        <xenc:CipherValue>${macKeyCipher}</xenc:CipherValue>
      </xenc:CipherData>
    </MACKey>
  </MACMethod>${packages.join("")}
</KeyContainer>
`;
}

/** T12 (key A, serial 987654321) plus a correctly MACed key B with secret `secretB`. */
export function t12File(options: { tamperA?: boolean; secretB?: string } = {}): string {
  const secretB = options.secretB ??
    "3132333435363738393031323334353637383930".replace(/^31/, "41");
  const cipherB = encryptValue(
    T12_PSK,
    "0f0e0d0c0b0a09080706050403020100",
    Buffer.from(secretB, "hex"),
  );
  const a = hotpPackage({
    serial: "987654321",
    cipher: T12_SECRET_CIPHER,
    mac: options.tamperA ? "AAAAAAAAAAAAAAAAAAAAAAAAAAA=" : T12_VALUE_MAC,
  });
  const b = hotpPackage({
    serial: "PSKCB0001",
    cipher: cipherB,
    mac: valueMac(T12_MAC_KEY, cipherB),
    counter: 3,
  });
  return pskContainer(T12_MAC_KEY_CIPHER, [a, b]);
}

/** T17: a TOTP key under the PSK 000102…0f (spec 12 §6). */
export const T17_PSK = "000102030405060708090a0b0c0d0e0f";

/** The T17 file. */
export function t17File(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<pskc:KeyContainer xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc"
    xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Version="1.0">
  <pskc:EncryptionKey><ds:KeyName xmlns:ds="http://www.w3.org/2000/09/xmldsig#">PSK</ds:KeyName></pskc:EncryptionKey>
  <pskc:MACMethod Algorithm="http://www.w3.org/2000/09/xmldsig#hmac-sha1">
    <pskc:MACKey>
      <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
      <xenc:CipherData><xenc:CipherValue>sLGys7S1tre4ubq7vL2+v7AXPb72FlkWHboUZomsM5cibm+XLkPRI6dmaoE2ZXAO</xenc:CipherValue></xenc:CipherData>
    </pskc:MACKey>
  </pskc:MACMethod>
  <pskc:KeyPackage>
    <pskc:DeviceInfo>
      <pskc:Manufacturer>TestVendor</pskc:Manufacturer>
      <pskc:SerialNo>TOTP0000TEST</pskc:SerialNo>
    </pskc:DeviceInfo>
    <pskc:Key Id="TOTP0000TEST" Algorithm="urn:ietf:params:xml:ns:keyprov:pskc:totp">
      <pskc:AlgorithmParameters>
        <pskc:Suite>sha1</pskc:Suite>
        <pskc:ResponseFormat Length="6" Encoding="DECIMAL"/>
      </pskc:AlgorithmParameters>
      <pskc:Data>
        <pskc:Secret>
          <pskc:EncryptedValue>
            <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
            <xenc:CipherData><xenc:CipherValue>oKGio6SlpqeoqaqrrK2ur9uQb2pjzSt2waP8XXruA6vh2N1VdM8jtl7nTz6tgh1O</xenc:CipherValue></xenc:CipherData>
          </pskc:EncryptedValue>
          <pskc:ValueMAC>OevIsdNL0pPGrIedlJMEqv1TETc=</pskc:ValueMAC>
        </pskc:Secret>
        <pskc:Counter><pskc:PlainValue>0</pskc:PlainValue></pskc:Counter>
        <pskc:TimeInterval><pskc:PlainValue>30</pskc:PlainValue></pskc:TimeInterval>
        <pskc:TimeDrift><pskc:PlainValue>4</pskc:PlainValue></pskc:TimeDrift>
      </pskc:Data>
    </pskc:Key>
  </pskc:KeyPackage>
</pskc:KeyContainer>
`;
}

/** T18: the T17 secret under a PBKDF2 key (password `qwerty`), RFC 6030 figure 7 layout. */
export function t18File(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<pskc:KeyContainer
  xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc"
  xmlns:xenc11="http://www.w3.org/2009/xmlenc11#"
  xmlns:pkcs5="http://www.rsasecurity.com/rsalabs/pkcs/schemas/pkcs-5v2-0#"
  xmlns:xenc="http://www.w3.org/2001/04/xmlenc#" Version="1.0">
  <pskc:EncryptionKey>
    <xenc11:DerivedKey>
      <xenc11:KeyDerivationMethod
        Algorithm="http://www.rsasecurity.com/rsalabs/pkcs/schemas/pkcs-5v2-0#pbkdf2">
        <pkcs5:PBKDF2-params>
          <Salt><Specified>AQIDBAUGBwg=</Specified></Salt>
          <IterationCount>1000</IterationCount>
          <KeyLength>16</KeyLength>
          <PRF/>
        </pkcs5:PBKDF2-params>
      </xenc11:KeyDerivationMethod>
      <xenc:ReferenceList><xenc:DataReference URI="#ED"/></xenc:ReferenceList>
      <xenc11:MasterKeyName>My Password 1</xenc11:MasterKeyName>
    </xenc11:DerivedKey>
  </pskc:EncryptionKey>
  <pskc:MACMethod Algorithm="http://www.w3.org/2000/09/xmldsig#hmac-sha1">
    <pskc:MACKey>
      <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
      <xenc:CipherData><xenc:CipherValue>0NHS09TV1tfY2drb3N3e37JavPgq8P8CtDDWWjCz4KimIEIF4S8sT4aJM31GbG/7</xenc:CipherValue></xenc:CipherData>
    </pskc:MACKey>
  </pskc:MACMethod>
  <pskc:KeyPackage>
    <pskc:DeviceInfo>
      <pskc:Manufacturer>TokenVendorAcme</pskc:Manufacturer>
      <pskc:SerialNo>987654322</pskc:SerialNo>
    </pskc:DeviceInfo>
    <pskc:Key Algorithm="urn:ietf:params:xml:ns:keyprov:pskc:hotp" Id="123456">
      <pskc:AlgorithmParameters>
        <pskc:ResponseFormat Length="6" Encoding="DECIMAL"/>
      </pskc:AlgorithmParameters>
      <pskc:Data>
        <pskc:Secret>
          <pskc:EncryptedValue Id="ED">
            <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
            <xenc:CipherData><xenc:CipherValue>wMHCw8TFxsfIycrLzM3Oz9Guvx+B6OfcQB2P8zLu/pjyyeO09ky33mkvbWUyNQ75</xenc:CipherValue></xenc:CipherData>
          </pskc:EncryptedValue>
          <pskc:ValueMAC>51RCLprueNUufFb684wKC8JZGxw=</pskc:ValueMAC>
        </pskc:Secret>
      </pskc:Data>
    </pskc:Key>
  </pskc:KeyPackage>
</pskc:KeyContainer>
`;
}

/** RFC 6030 figure 2: a plain HOTP secret (serial 987654321, counter 0, 8 digits). */
export function plainFile(): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<KeyContainer Version="1.0" Id="exampleID1" xmlns="urn:ietf:params:xml:ns:keyprov:pskc">
  <KeyPackage>
    <DeviceInfo>
      <Manufacturer>Manufacturer</Manufacturer>
      <SerialNo>987654321</SerialNo>
      <UserId>DC=example-bank,DC=net</UserId>
    </DeviceInfo>
    <CryptoModuleInfo><Id>CM_ID_001</Id></CryptoModuleInfo>
    <Key Id="12345678" Algorithm="urn:ietf:params:xml:ns:keyprov:pskc:hotp">
      <Issuer>Issuer</Issuer>
      <AlgorithmParameters>
        <ResponseFormat Length="8" Encoding="DECIMAL"/>
      </AlgorithmParameters>
      <Data>
        <Secret>
          <PlainValue>MTIzNDU2Nzg5MDEyMzQ1Njc4OTA=</PlainValue>
        </Secret>
        <Counter><PlainValue>0</PlainValue></Counter>
      </Data>
      <UserId>UID=jsmith,DC=example-bank,DC=net</UserId>
    </Key>
  </KeyPackage>
</KeyContainer>
`;
}

/**
 * A PBKDF2 container (RFC 6030 figure 7 layout) with `iterations` rounds: one HOTP key
 * (`serial`, secret `secretHex`) and the MAC key, both under the key derived from `password`.
 * With `derive: false` the key is not derived (a file that must be refused before that).
 */
export function pbkdf2File(
  opts: {
    iterations: number;
    password: string;
    serial: string;
    secretHex: string;
    derive?: boolean;
  },
): string {
  const salt = Buffer.from("0102030405060708", "hex");
  const key = opts.derive === false
    ? "00".repeat(16)
    : pbkdf2Sync(opts.password, salt, opts.iterations, 16, "sha1").toString("hex");
  const macKeyCipher = encryptValue(
    key,
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf",
    Buffer.from(T12_MAC_KEY, "hex"),
  );
  const cipher = encryptValue(
    key,
    "b0b1b2b3b4b5b6b7b8b9babbbcbdbebf",
    Buffer.from(opts.secretHex, "hex"),
  );
  const pkg = hotpPackage({ serial: opts.serial, cipher, mac: valueMac(T12_MAC_KEY, cipher) });
  return `<?xml version="1.0" encoding="UTF-8"?>
<KeyContainer Version="1.0"
    xmlns="urn:ietf:params:xml:ns:keyprov:pskc"
    xmlns:xenc11="http://www.w3.org/2009/xmlenc11#"
    xmlns:pkcs5="http://www.rsasecurity.com/rsalabs/pkcs/schemas/pkcs-5v2-0#"
    xmlns:xenc="http://www.w3.org/2001/04/xmlenc#">
  <EncryptionKey>
    <xenc11:DerivedKey>
      <xenc11:KeyDerivationMethod
        Algorithm="http://www.rsasecurity.com/rsalabs/pkcs/schemas/pkcs-5v2-0#pbkdf2">
        <pkcs5:PBKDF2-params>
          <Salt><Specified>${salt.toString("base64")}</Specified></Salt>
          <IterationCount>${opts.iterations}</IterationCount>
          <KeyLength>16</KeyLength>
        </pkcs5:PBKDF2-params>
      </xenc11:KeyDerivationMethod>
    </xenc11:DerivedKey>
  </EncryptionKey>
  <MACMethod Algorithm="http://www.w3.org/2000/09/xmldsig#hmac-sha1">
    <MACKey>
      <xenc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
      <xenc:CipherData><xenc:CipherValue>${macKeyCipher}</xenc:CipherValue></xenc:CipherData>
    </MACKey>
  </MACMethod>${pkg}
</KeyContainer>
`;
}
