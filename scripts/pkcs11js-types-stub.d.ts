// Used only by the Dockerfile's build stage when the optional pkcs11js could not be installed (no compiler):
// the types src/crypto/pkcs11-key-provider.ts names, as `any`, so tsc compiles the provider, which then
// stops the boot with one line if VAULT_KEY_PROVIDER=pkcs11 is asked of an image without the binding.
declare namespace pkcs11js {
  type PKCS11 = any;
  type Mechanism = any;
  type AesGCM = any;
}
declare const pkcs11js: any;
export = pkcs11js;
