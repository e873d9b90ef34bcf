import { PolyHalError } from '@polyhal/hal';

/**
 * Parameters asked for before a lazy layer's first forward created them (`parameters()`, `stateDict()`, an
 * optimizer built too early); the message names the layer and says to call the model once first.
 */
export class UninitializedParameterError extends PolyHalError {}
