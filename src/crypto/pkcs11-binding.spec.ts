import { bindingProblem } from './pkcs11-key-provider';

describe('what the vault says when pkcs11js cannot be loaded', () => {
  it('names what is missing when the binding is not installed, not a compiler alone', () => {
    const message = bindingProblem(
      Object.assign(new Error("Cannot find module 'pkcs11js'"), { code: 'MODULE_NOT_FOUND' }),
    );
    expect(message).toMatch(/binding is not in this installation/);
    expect(message).toMatch(/python3, make, a C\+\+ compiler and Node\.js's headers/);
    expect(message).toMatch(/--build-arg WITH_PKCS11=true/);
  });

  it('tells a binding built for another Node.js from a missing one', () => {
    const message = bindingProblem(
      Object.assign(new Error('wrong ELF class'), { code: 'ERR_DLOPEN_FAILED' }),
    );
    expect(message).toMatch(/installed but does not load \(ERR_DLOPEN_FAILED\)/);
    expect(message).toMatch(/npm rebuild pkcs11js/);
    expect(message).not.toContain('wrong ELF class');
  });
});
