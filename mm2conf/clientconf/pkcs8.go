package clientconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// errWrongPassword means a decryption failed in a way a wrong password explains.
var errWrongPassword = errors.New("wrong password")

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt      []byte
	Iter      int
	KeyLength int                      `asn1:"optional"`
	PRF       pkix.AlgorithmIdentifier `asn1:"optional"`
}

var (
	oidPBES2       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1    = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512  = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC   = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC  = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
	pkcs8ReencHint = "re-encrypt the key with PBES2/AES: openssl pkcs8 -topk8 -v2 aes-256-cbc -in key.pem -out key-enc.pem"
)

// decryptPKCS8 decrypts a DER EncryptedPrivateKeyInfo protected with PBES2 (PBKDF2 with an
// HMAC-SHA1/SHA2 PRF, AES-CBC or 3DES-CBC), the scheme OpenSSL 1.1+/3 and Java 11+ write.
// It returns the DER PKCS#8 PrivateKeyInfo.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("not a PKCS#8 EncryptedPrivateKeyInfo")
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("unsupported key encryption %v (only PBES2 is supported)", info.Algo.Algorithm)
	}
	var p pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &p); err != nil {
		return nil, errors.New("malformed PBES2 parameters")
	}
	if !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("unsupported key derivation %v (only PBKDF2 is supported)", p.KDF.Algorithm)
	}
	var kp pbkdf2Params
	if _, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp); err != nil {
		return nil, errors.New("malformed PBKDF2 parameters")
	}
	var prf func() hash.Hash
	switch {
	case len(kp.PRF.Algorithm) == 0 || kp.PRF.Algorithm.Equal(oidHMACSHA1):
		prf = sha1.New
	case kp.PRF.Algorithm.Equal(oidHMACSHA224):
		prf = sha256.New224
	case kp.PRF.Algorithm.Equal(oidHMACSHA256):
		prf = sha256.New
	case kp.PRF.Algorithm.Equal(oidHMACSHA384):
		prf = sha512.New384
	case kp.PRF.Algorithm.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("unsupported PBKDF2 PRF %v", kp.PRF.Algorithm)
	}
	var keyLen int
	var newCipher func([]byte) (cipher.Block, error)
	switch {
	case p.Scheme.Algorithm.Equal(oidAES128CBC):
		keyLen, newCipher = 16, aes.NewCipher
	case p.Scheme.Algorithm.Equal(oidAES192CBC):
		keyLen, newCipher = 24, aes.NewCipher
	case p.Scheme.Algorithm.Equal(oidAES256CBC):
		keyLen, newCipher = 32, aes.NewCipher
	case p.Scheme.Algorithm.Equal(oidDESEDE3CBC):
		keyLen, newCipher = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("unsupported key cipher %v", p.Scheme.Algorithm)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(p.Scheme.Parameters.FullBytes, &iv); err != nil {
		return nil, errors.New("malformed cipher parameters")
	}
	if kp.Iter <= 0 || kp.Iter > 10_000_000 {
		return nil, errors.New("unreasonable PBKDF2 iteration count")
	}
	key, err := pbkdf2.Key(prf, password, kp.Salt, kp.Iter, keyLen)
	if err != nil {
		return nil, err
	}
	block, err := newCipher(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.Data) == 0 || len(info.Data)%bs != 0 {
		return nil, errors.New("malformed encrypted key")
	}
	out := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(out, info.Data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs || pad > len(out) {
		return nil, errWrongPassword
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errWrongPassword
		}
	}
	return out[:len(out)-pad], nil
}
